#include "scheduling/wait_reasons.h"

#include <cstdio>
#include <ctime>
#include <vector>

#include "common/units.h"

namespace shoal::wait_reasons {

namespace {

std::string Number(double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", value);
  return buf;
}

// One resource of a Resources value, printed with its unit.
struct Amount {
  enum Kind { kCpus, kMemory, kGpus } kind;

  double Of(const Resources& r) const {
    switch (kind) {
      case kCpus: return r.cpus;
      case kMemory: return static_cast<double>(r.memory_bytes);
      case kGpus: return r.gpus;
    }
    return 0;
  }
  // "4 CPUs", "8G of memory", "1 GPU".
  std::string Text(double value) const {
    switch (kind) {
      case kCpus: return Number(value) + (value == 1 ? " CPU" : " CPUs");
      case kMemory: return FormatMemory(static_cast<int64_t>(value)) + " of memory";
      case kGpus: return Number(value) + (value == 1 ? " GPU" : " GPUs");
    }
    return "";
  }
  // The bare number, for "6 of the 8 CPUs".
  std::string Bare(double value) const {
    return kind == kMemory ? FormatMemory(static_cast<int64_t>(value)) : Number(value);
  }
};

constexpr Amount kAmounts[] = {{Amount::kCpus}, {Amount::kMemory}, {Amount::kGpus}};

// The resource in which `need` is the largest share of `capacity`.
Amount DominantAmount(const Resources& need, const Resources& capacity) {
  Amount best = kAmounts[0];
  double best_share = -1;
  for (const Amount& amount : kAmounts) {
    double total = amount.Of(capacity);
    double share = total > 0 ? amount.Of(need) / total : 0;
    if (share > best_share) best = amount, best_share = share;
  }
  return best;
}

std::string Ordinal(int n) {
  int tens = n % 100;
  const char* suffix = (tens >= 11 && tens <= 13) ? "th" : n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
  return std::to_string(n) + suffix;
}

}  // namespace

std::string Short(const Resources& need, const Resources& free) {
  std::vector<std::string> parts;
  for (const Amount& amount : kAmounts) {
    double wanted = amount.Of(need);
    double left = std::max(0.0, amount.Of(free));
    if (wanted <= left + 1e-9) continue;
    parts.push_back(amount.Text(wanted) + " (" + (left <= 1e-9 ? std::string("none") : amount.Bare(left)) + " free)");
  }
  if (parts.empty()) return "fits the free resources";
  std::string text = "needs " + parts[0];
  for (size_t i = 1; i < parts.size(); ++i) text += (i + 1 == parts.size() ? " and " : ", ") + parts[i];
  return text;
}

std::string ExpectedStart(std::optional<int64_t> start_ms, int64_t now_ms) {
  if (!start_ms) return "starts when running jobs end (they have no estimates)";
  if (*start_ms - now_ms < 60 * 1000) return "expected to start within a minute, as running jobs end (by their estimates)";
  // An absolute time, so that the sentence changes only when the estimate does.
  time_t seconds = static_cast<time_t>(*start_ms / 1000);
  struct tm utc{};
  gmtime_r(&seconds, &utc);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", &utc);
  return std::string("expected to start around ") + when + ", when running jobs end (by their estimates)";
}

std::string Position(const std::string& queue, int position, const std::string& first_ahead) {
  if (position <= 1) return "first in queue " + queue;
  return Ordinal(position) + " in queue " + queue + ", behind " + first_ahead;
}

std::string QueueUse(const QueueSpec& queue, const Resources& used, const Resources& capacity, const Resources& need) {
  Amount amount = DominantAmount(need, capacity);
  double guaranteed = amount.Of(capacity) * queue.guarantee;
  if (guaranteed <= 0) return "queue " + queue.name + " has no guaranteed share and uses " + amount.Text(amount.Of(used));
  return "queue " + queue.name + " uses " + amount.Bare(amount.Of(used)) + " of its guaranteed " + amount.Text(guaranteed);
}

std::string OverQueueMax(const QueueSpec& queue, const Resources& used, const Resources& capacity, const Resources& need) {
  for (const Amount& amount : kAmounts) {
    double limit = amount.Of(capacity) * queue.max;
    if (amount.Of(used) + amount.Of(need) <= limit + 1e-9) continue;
    return "queue " + queue.name + " may use at most " + amount.Text(limit) + " (its max, " + Number(queue.max * 100) +
           "% of the cluster) and uses " + amount.Bare(amount.Of(used)) + "; this job needs " + amount.Bare(amount.Of(need));
  }
  return "queue " + queue.name + " is at its max";
}

std::string OverUserLimit(const std::string& user, const QueueSpec& queue, const Resources& used, const Resources& need) {
  for (const Amount& amount : kAmounts) {
    double limit = amount.Of(queue.user_limit);
    if (limit <= 0 || amount.Of(used) + amount.Of(need) <= limit + 1e-9) continue;
    return (user.empty() ? std::string("this user") : user) + " uses " + amount.Bare(amount.Of(used)) + " of the " +
           amount.Text(limit) + " queue " + queue.name + " allows each user, and this job needs " + amount.Bare(amount.Of(need));
  }
  return "its user is at the queue's limit";
}

std::string WouldDelay(const std::string& reserved_job, bool has_estimate) {
  if (has_estimate) return "fits now, but would run past the start reserved for " + reserved_job;
  return "fits now, but would delay " + reserved_job +
         ", which is reserved to start first (this job has no estimate: set `estimate:` or timeouts.job so it can "
         "start in the gap)";
}

}  // namespace shoal::wait_reasons
