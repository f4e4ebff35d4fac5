// Metrics: what the benchmark reports about one replay, computed from its result alone.
//
// Contract (times in seconds from the slice's first submission; every job of the slice
// was submitted in the window and ran to completion, so every job counts):
//  - JCT (job completion time) = finish - submission; the mean and the p99 (nearest rank:
//    the smallest JCT that at least 99% of jobs do not exceed).
//  - Queueing delay = first start - submission, mean.
//  - Makespan = the last finish (the first submission is 0).
//  - GPU utilization = GPU-seconds held by running jobs / (cluster GPUs x makespan).
//  - GPU utilization while jobs wait = the same over only the time during which at least
//    one job was waiting: what a policy leaves idle while there is work (a waiting job
//    may not fit in what is idle; strict FIFO leaves idle what its head cannot use).
//  - Longest passed over: the most time any job waited, before its first start, after a
//    job submitted strictly later than it had started.
//  - Longest wait: the most time any job spent not running between its submission and its
//    end (JCT - duration): its first wait and every wait after a preemption, with the
//    service each preemption cost.
//  - Queue fairness, for one queue: the time it had a waiting job, its mean share of the
//    cluster's GPUs over that time, and the fraction of that time during which it held at
//    least 90% of its guaranteed share (within 10% of its guarantee, or above it).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/schedule/replay.h"

namespace shoal::bench {

struct PolicyMetrics {
  double mean_jct_s = 0;
  double p99_jct_s = 0;
  double mean_queueing_s = 0;
  double makespan_s = 0;
  double gpu_utilization = 0;
  double gpu_utilization_while_waiting = 0;  // 0 when no job ever waited
  int64_t preemptions = 0;
  double longest_passed_over_s = 0;
  double longest_wait_s = 0;
};

PolicyMetrics ComputeMetrics(const std::vector<ReplayJob>& jobs, const ReplayResult& result, int cluster_gpus);

struct QueueFairness {
  double waiting_s = 0;                // time with at least one waiting job
  double mean_share_waiting = 0;       // GPUs held / cluster GPUs, averaged over that time
  double fraction_near_guarantee = 0;  // of that time, holding >= 90% of the guarantee (1 if never waiting)
};

QueueFairness ComputeQueueFairness(const ReplayResult& result, int queue, double guarantee, int cluster_gpus);

}  // namespace shoal::bench
