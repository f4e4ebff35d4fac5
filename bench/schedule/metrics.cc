#include "bench/schedule/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace shoal::bench {
namespace {

double Mean(const std::vector<int64_t>& values) {
  double sum = 0;
  for (int64_t value : values) sum += static_cast<double>(value);
  return values.empty() ? 0 : sum / static_cast<double>(values.size());
}

double NearestRankPercentile(std::vector<int64_t> values, double percent) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t rank = static_cast<size_t>(std::ceil(percent / 100 * static_cast<double>(values.size())));
  return static_cast<double>(values[std::clamp<size_t>(rank, 1, values.size()) - 1]);
}

// `jobs` are sorted by submission: going backwards, keep the earliest start among the
// jobs submitted strictly later than the group of equal submissions at hand.
double LongestPassedOver(const std::vector<ReplayJob>& jobs, const std::vector<int64_t>& first_start_s) {
  int64_t earliest_later_start = std::numeric_limits<int64_t>::max();
  int64_t longest = 0;
  for (size_t end = jobs.size(); end > 0;) {
    size_t begin = end;
    while (begin > 0 && jobs[begin - 1].submit_s == jobs[end - 1].submit_s) --begin;
    int64_t earliest_in_group = std::numeric_limits<int64_t>::max();
    for (size_t job = begin; job < end; ++job) {
      const int64_t passed_over = first_start_s[job] - earliest_later_start;  // > 0: a later job started first
      longest = std::max(longest, passed_over);
      earliest_in_group = std::min(earliest_in_group, first_start_s[job]);
    }
    earliest_later_start = std::min(earliest_later_start, earliest_in_group);
    end = begin;
  }
  return static_cast<double>(longest);
}

}  // namespace

PolicyMetrics ComputeMetrics(const std::vector<ReplayJob>& jobs, const ReplayResult& result, int cluster_gpus) {
  PolicyMetrics metrics;
  std::vector<int64_t> jct, queueing;
  int64_t makespan = 0;
  for (size_t job = 0; job < jobs.size(); ++job) {
    jct.push_back(result.finish_s[job] - jobs[job].submit_s);
    queueing.push_back(result.first_start_s[job] - jobs[job].submit_s);
    metrics.longest_wait_s = std::max(metrics.longest_wait_s, static_cast<double>(jct.back() - jobs[job].duration_s));
    makespan = std::max(makespan, result.finish_s[job]);
  }
  metrics.mean_jct_s = Mean(jct);
  metrics.p99_jct_s = NearestRankPercentile(jct, 99);
  metrics.mean_queueing_s = Mean(queueing);
  metrics.makespan_s = static_cast<double>(makespan);
  if (makespan > 0) {
    metrics.gpu_utilization =
        static_cast<double>(result.busy_gpu_seconds) / (static_cast<double>(cluster_gpus) * makespan);
  }
  if (result.waiting_seconds > 0) {
    metrics.gpu_utilization_while_waiting = static_cast<double>(result.busy_gpu_seconds_while_waiting) /
                                            (static_cast<double>(cluster_gpus) * static_cast<double>(result.waiting_seconds));
  }
  metrics.preemptions = result.preemptions;
  metrics.longest_passed_over_s = LongestPassedOver(jobs, result.first_start_s);
  return metrics;
}

QueueFairness ComputeQueueFairness(const ReplayResult& result, int queue, double guarantee, int cluster_gpus) {
  const std::vector<int64_t>& seconds_by_gpus = result.waiting_seconds_by_gpus_held[queue];
  const double near_guarantee_gpus = 0.9 * guarantee * cluster_gpus;
  double waiting = 0, gpu_seconds = 0, near = 0;
  for (size_t gpus = 0; gpus < seconds_by_gpus.size(); ++gpus) {
    const double seconds = static_cast<double>(seconds_by_gpus[gpus]);
    waiting += seconds;
    gpu_seconds += seconds * static_cast<double>(gpus);
    if (static_cast<double>(gpus) >= near_guarantee_gpus - 1e-9) near += seconds;
  }
  QueueFairness fairness;
  fairness.waiting_s = waiting;
  fairness.mean_share_waiting = waiting > 0 ? gpu_seconds / waiting / cluster_gpus : 0;
  fairness.fraction_near_guarantee = waiting > 0 ? near / waiting : 1;
  return fairness;
}

}  // namespace shoal::bench
