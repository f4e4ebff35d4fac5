#include "scheduling/queue_credit.h"

#include <algorithm>

namespace shoal {

void QueueCredit::Advance(const ScheduleInput& input) {
  const double elapsed_ms = last_ms_ ? static_cast<double>(std::max<int64_t>(0, input.now_ms - *last_ms_)) : 0;
  last_ms_ = input.now_ms;
  std::map<std::string, double> integrated;
  for (const auto& [queue, rate] : rate_) {
    double credit = credit_.count(queue) ? credit_.at(queue) : 0;
    credit = rate ? credit + *rate * elapsed_ms : std::min(credit, 0.0);
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
    auto smallest = smallest_waiting.find(queue.name);
    if (smallest == smallest_waiting.end()) {
      rate_[queue.name] = std::nullopt;
      continue;
    }
    const double share = DominantShare(held[queue.name], capacity);
    rate_[queue.name] = share + smallest->second > queue.guarantee + 1e-9 ? queue.guarantee - share : 0.0;
  }
  // Queues no longer configured have no rate, so their credit ends at the next call; end it now.
  std::erase_if(credit_, [&](const auto& entry) { return !rate_.count(entry.first); });
}

}  // namespace shoal
