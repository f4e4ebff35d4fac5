#include "scheduling/queue_credit.h"

#include <algorithm>

namespace shoal {

void QueueCredit::Advance(const ScheduleInput& input) {
  const double elapsed_ms = last_ms_ ? static_cast<double>(std::max<int64_t>(0, input.now_ms - *last_ms_)) : 0;
  last_ms_ = input.now_ms;
  std::map<std::string, double> integrated;
  for (const auto& [queue, rate] : rate_) {
    const double before = credit_.count(queue) ? credit_.at(queue) : 0;
    double credit = before + rate.per_ms * elapsed_ms;
    if (rate.drops_credit) credit = std::min(before, 0.0);
    if (rate.stops_at_zero) credit = before > 0 ? std::max(credit, 0.0) : before;
    if (credit != 0) integrated[queue] = credit;
  }
  credit_ = std::move(integrated);

  const Resources& capacity = input.cluster.capacity;
  std::map<std::string, Resources> held;
  for (const RunningJob& job : input.running) held[job.queue] += job.total;
  std::map<std::string, double> smallest_waiting;  // queue -> its smallest waiting job's dominant share
  for (const PendingJob& job : input.pending) {
    Resources total;
    for (const Resources& task : job.tasks) total += task;
    const double share = DominantShare(total, capacity);
    auto [smallest, inserted] = smallest_waiting.emplace(job.queue, share);
    if (!inserted) smallest->second = std::min(smallest->second, share);
  }
  rate_.clear();
  for (const QueueSpec& queue : input.config->queues) {
    if (queue.guarantee <= 0) continue;
    const double share = DominantShare(held[queue.name], capacity);
    auto smallest = smallest_waiting.find(queue.name);
    if (smallest != smallest_waiting.end() && share + smallest->second > queue.guarantee + 1e-9) {
      rate_[queue.name] = Rate{.per_ms = queue.guarantee - share};
    } else if (share > queue.guarantee + 1e-9) {
      rate_[queue.name] = Rate{.per_ms = queue.guarantee - share, .stops_at_zero = true};
    } else {
      rate_[queue.name] = Rate{.drops_credit = smallest == smallest_waiting.end()};
    }
  }
  // Queues no longer configured have no rate, so their credit ends at the next call; end it now.
  std::erase_if(credit_, [&](const auto& entry) { return !rate_.count(entry.first); });
}

}  // namespace shoal
