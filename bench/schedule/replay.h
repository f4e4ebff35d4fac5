// Replay: an event-driven simulation of a GPU cluster running a slice of a trace under a
// scheduling policy, so that policies are compared on the same jobs in one run.
//
// Contract:
//  - The cluster: `gpus` GPUs in nodes of 8, with cpus_per_gpu CPUs and memory_per_gpu of
//    memory per GPU (derived: the trace gives GPUs only). A job of at most 8 GPUs is one
//    task; a larger job is a gang of ceil(n/8) tasks of 8 GPUs each (a job of 12 GPUs takes
//    16). The replay counts GPUs as one pool: it places no task on a node, as
//    shoal::Schedule does not (in reality a task of 8 GPUs needs a whole node).
//  - Time is a fake clock in whole seconds that jumps from event to event. The events are
//    arrivals and completions; all those of one second are applied together, then the
//    policy decides once. (A job of 0 s ends in the second it starts, and the policy is
//    asked again at that second.)
//  - A started job runs for exactly its remaining time unless preempted. A preempted job
//    loses preemption_cost_s of service (its remaining time grows by that much) and waits
//    again. Every job runs to completion: the replay ends when the last one has ended.
//  - Decisions are checked: a job started must be waiting and fit in the free GPUs (after
//    the decision's preemptions), a job preempted must be running, and a decision must not
//    leave the cluster idle while jobs wait. A policy that breaks one of these ends the
//    replay with an error naming the policy, the time and the job. A job that needs more
//    GPUs than the cluster has is an error before the replay starts.
//  - Measured: per job its first start and its finish; GPU-seconds held by running jobs
//    (service lost to preemption included); preemptions; per queue, how many seconds it
//    had waiting work while holding each number of GPUs; the policy's calls; the replay's
//    wall time.
// Thread-safety: one thread; a ReplayPolicy is used by one replay at a time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace shoal::bench {

struct ClusterModel {
  static constexpr int kGpusPerNode = 8;
  int gpus = 64;
  double cpus_per_gpu = 4;
  int64_t memory_per_gpu = int64_t{32} << 30;
  int64_t preemption_cost_s = 60;
};

// The GPUs of each task of a job that asks for `num_gpus`: {n} up to 8, else ceil(n/8) x {8}.
std::vector<int> TaskGpus(int num_gpus);

struct ReplayJob {
  int64_t submit_s = 0;
  int64_t duration_s = 0;
  std::vector<int> task_gpus;  // TaskGpus of what the trace asks for
  int gpus = 0;                // their sum: what the job holds while running
  int queue = 0;               // index into the replay's queues
};

// "j004213": how messages and shoal::Schedule name job 4213; ids sort as indices do.
std::string JobId(int index);

// What a policy sees at an event. Indices are into `jobs`.
struct ReplayView {
  int64_t now_s = 0;
  const std::vector<ReplayJob>* jobs = nullptr;
  const std::vector<int64_t>* remaining_s = nullptr;  // per job: service still to give
  const std::vector<int>* waiting = nullptr;          // in the order they (re)joined the wait
  const std::vector<int>* running = nullptr;
  std::vector<int> new_waiting;  // joined the wait since the last call: arrivals and jobs preempted then
  std::vector<int> finished;     // ended since the last call
  int free_gpus = 0;
  int capacity_gpus = 0;
};

struct ReplayDecision {
  std::vector<int> preempt;  // applied first
  std::vector<int> start;
};

class ReplayPolicy {
 public:
  virtual ~ReplayPolicy() = default;
  virtual std::string Name() const = 0;
  // An error ends the replay (a policy that broke its own contract).
  virtual Result<ReplayDecision> Decide(const ReplayView& view) = 0;
};

struct ReplayResult {
  std::vector<int64_t> first_start_s;  // per job
  std::vector<int64_t> finish_s;       // per job
  int64_t busy_gpu_seconds = 0;
  int64_t waiting_seconds = 0;                // with at least one job waiting (any queue)
  int64_t busy_gpu_seconds_while_waiting = 0;  // GPUs held over those seconds
  int64_t preemptions = 0;
  // [queue][g]: seconds during which the queue had a waiting job and held g GPUs.
  std::vector<std::vector<int64_t>> waiting_seconds_by_gpus_held;
  int64_t decisions = 0;    // calls of ReplayPolicy::Decide
  size_t most_waiting = 0;  // the most jobs waiting at one call
  double wall_seconds = 0;  // the whole replay, this machine's time
};

// `jobs` sorted by submission (ties in the order given); queue indices below num_queues.
Result<ReplayResult> Replay(const std::vector<ReplayJob>& jobs, int num_queues, const ClusterModel& model,
                            ReplayPolicy& policy);

}  // namespace shoal::bench
