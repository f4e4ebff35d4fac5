#include "bench/schedule/reference_schedules.h"

#include <algorithm>
#include <vector>

namespace shoal::bench {

Result<ReplayDecision> ShortestJobFirst::Decide(const ReplayView& view) {
  const std::vector<ReplayJob>& jobs = *view.jobs;
  for (int index : view.new_waiting) waiting_.insert({jobs[index].duration_s, jobs[index].submit_s, index});
  ReplayDecision decision;
  int free_gpus = view.free_gpus;
  for (auto it = waiting_.begin(); it != waiting_.end() && free_gpus > 0;) {
    const int index = std::get<2>(*it);
    if (jobs[index].gpus > free_gpus) {
      ++it;
      continue;
    }
    free_gpus -= jobs[index].gpus;
    decision.start.push_back(index);
    it = waiting_.erase(it);
  }
  return decision;
}

ShortestRemainingGpuTimeFirst::Key ShortestRemainingGpuTimeFirst::KeyOf(const ReplayView& view, int index) {
  const ReplayJob& job = (*view.jobs)[index];
  return {(*view.remaining_s)[index] * job.gpus, job.submit_s, index};
}

Result<ReplayDecision> ShortestRemainingGpuTimeFirst::Decide(const ReplayView& view) {
  for (int index : view.new_waiting) waiting_.insert(KeyOf(view, index));
  std::vector<Key> running;
  for (int index : *view.running) running.push_back(KeyOf(view, index));
  std::sort(running.begin(), running.end());

  // Merge the running jobs (sorted) with the waiting ones (a sorted set), taking greedily
  // every job that fits in what the jobs before it left.
  ReplayDecision decision;
  int left_gpus = view.capacity_gpus;
  auto take = [&](const Key& key) {
    const int gpus = (*view.jobs)[std::get<2>(key)].gpus;
    if (gpus > left_gpus) return false;
    left_gpus -= gpus;
    return true;
  };
  auto next_running = running.begin();
  auto next_waiting = waiting_.begin();
  while (next_running != running.end() || (next_waiting != waiting_.end() && left_gpus > 0)) {
    const bool running_first =
        next_waiting == waiting_.end() || (next_running != running.end() && *next_running < *next_waiting);
    if (running_first) {
      if (!take(*next_running)) decision.preempt.push_back(std::get<2>(*next_running));
      ++next_running;
    } else if (take(*next_waiting)) {
      decision.start.push_back(std::get<2>(*next_waiting));
      next_waiting = waiting_.erase(next_waiting);
    } else {
      ++next_waiting;
    }
  }
  return decision;
}

}  // namespace shoal::bench
