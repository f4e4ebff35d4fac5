// Reference schedules: two clairvoyant policies that know every job's duration, which no
// real scheduler does here (the trace has no user estimates). They bound what knowing
// durations is worth; only the benchmark computes them.
//
// Contract (both count GPUs as one pool, like the replay; ties go to the earlier
// submission, then the earlier row of the trace):
//  - ShortestJobFirst (SJF): non-preemptive. At each event it goes through the waiting
//    jobs by duration, shortest first, and starts every one that fits in the GPUs still
//    free (greedy: a job that does not fit is skipped, the next may start).
//  - ShortestRemainingGpuTimeFirst (SRTF): preemptive. At each event it orders running and
//    waiting jobs together by remaining GPU-time (remaining seconds x GPUs), least first,
//    and keeps the greedy selection that fits in the cluster: running jobs left out are
//    preempted (each loses the replay's preemption cost, 60 s, of service: its remaining
//    time grows by that much), waiting jobs chosen start. So a running job is preempted
//    only for jobs with less remaining GPU-time.
// Thread-safety: one thread; a policy instance serves one replay.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <tuple>

#include "bench/schedule/replay.h"

namespace shoal::bench {

class ShortestJobFirst : public ReplayPolicy {
 public:
  std::string Name() const override { return "SJF (clairvoyant)"; }
  Result<ReplayDecision> Decide(const ReplayView& view) override;

 private:
  std::set<std::tuple<int64_t, int64_t, int>> waiting_;  // (duration, submission, index)
};

class ShortestRemainingGpuTimeFirst : public ReplayPolicy {
 public:
  std::string Name() const override { return "SRTF (clairvoyant)"; }
  Result<ReplayDecision> Decide(const ReplayView& view) override;

 private:
  using Key = std::tuple<int64_t, int64_t, int>;  // (remaining GPU-seconds, submission, index)
  static Key KeyOf(const ReplayView& view, int index);

  std::set<Key> waiting_;  // a waiting job's remaining time does not change while it waits
};

}  // namespace shoal::bench
