// ShoalPolicy: a ReplayPolicy that asks the real scheduling policy (shoal::Schedule,
// scheduling/schedule_policy.h) what starts at each event, as the server would.
//
// Contract:
//  - It keeps one ScheduleInput across calls and updates it from the replay's arrivals and
//    completions and from its own admissions: pending and running jobs, free resources and
//    free GPU device indices (0..gpus-1). Times are the replay's seconds x 1000.
//  - Schedule is told no durations (estimate_ms = 0 for every pending and running job),
//    unless built with declared_estimates: then every job declares its true duration, as
//    users who estimate exactly would (a reference row: what backfill gains from estimates).
//    It is asked with explain = false: the reasons' keys are checked, not their words.
//  - Job ids are "j" and the job's index, zero-padded, so id order is submission order
//    then the trace's row order. A job's queue is queue_names[job.queue]; its user is its
//    queue's name (the trace has no users: one user per queue). Priority 0 for all.
//  - A task of g GPUs asks for g GPUs, g x cpus_per_gpu CPUs and g x memory_per_gpu.
//  - The preemptions Schedule chooses are applied (the replay charges each its cost and
//    returns the job to the wait at its next call), and a second pass at the same time
//    starts what they made room for, as the server's next pass would.
//  - What Schedule returns is checked: each admitted job pending and admitted once, each
//    of its tasks given exactly its number of distinct free devices, the total within the
//    free resources, and a reason for every pending job not admitted. A violation is an
//    error naming the job.
//  - Each job's attained service (what its preempted attempts ran, size x ms) is passed to
//    Schedule, as the server passes it (config.service_levels), and so are its waits
//    since its first start (the starvation bound's max_wait_to_resume) and, for a running
//    job, whether it was resumed for having waited past that bound.
//  - It counts Schedule's calls and the wall time spent in them.
// Thread-safety: one thread.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "bench/schedule/replay.h"
#include "scheduling/queue_credit.h"
#include "scheduling/schedule_policy.h"

namespace shoal::bench {

class ShoalPolicy : public ReplayPolicy {
 public:
  // `config` must outlive the policy and name every queue in `queue_names`.
  ShoalPolicy(std::string name, const SchedulingConfig& config, std::vector<std::string> queue_names,
              const ClusterModel& model, bool declared_estimates = false);

  std::string Name() const override { return name_; }
  Result<ReplayDecision> Decide(const ReplayView& view) override;

  int64_t schedule_calls() const { return schedule_calls_; }
  double schedule_seconds() const { return schedule_seconds_; }

 private:
  Resources TaskResources(int gpus) const;
  void AddPending(const ReplayJob& job, int index);
  // A job that has run: what it has waited since its first start, at now.
  int64_t WaitedSinceFirstRun(int index) const;
  void EndRunning(int index);
  // The service a running job has had in all its attempts, size x ms.
  double AttainedOf(int index) const;
  // One call of Schedule: applies its admissions and preemptions to the input and adds
  // them to `decision`.
  Status Pass(const ReplayView& view, ReplayDecision& decision);
  // Checks `admission` against the input Schedule saw; on success moves the job from
  // pending to running and takes its devices.
  Status ApplyAdmission(const JobAdmission& admission, int64_t now_ms);

  std::string name_;
  bool declared_estimates_;
  std::vector<std::string> queue_names_;
  ClusterModel model_;
  ScheduleInput input_;
  QueueCredit credit_;
  std::map<std::string, int> index_of_id_;
  std::map<int, std::vector<int>> devices_of_running_;  // job index -> the devices it holds
  std::map<int, double> attained_;                      // job index -> service in its ended attempts
  // job index -> (when it was last stopped by a preemption, what it had waited before that
  // since its first start), for jobs that have run
  std::map<int, std::pair<int64_t, int64_t>> waits_after_run_;
  int64_t schedule_calls_ = 0;
  double schedule_seconds_ = 0;
};

}  // namespace shoal::bench
