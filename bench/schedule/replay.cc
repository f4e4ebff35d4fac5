#include "bench/schedule/replay.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>

namespace shoal::bench {
namespace {

enum class JobState { kNotArrived, kWaiting, kRunning, kDone };

// The replay's mutable state; Replay() below is its event loop.
class Simulation {
 public:
  Simulation(const std::vector<ReplayJob>& jobs, int num_queues, const ClusterModel& model, ReplayPolicy& policy)
      : jobs_(jobs),
        model_(model),
        policy_(policy),
        state_(jobs.size(), JobState::kNotArrived),
        remaining_s_(jobs.size()),
        waiting_per_queue_(num_queues),
        gpus_per_queue_(num_queues),
        free_gpus_(model.gpus) {
    result_.first_start_s.assign(jobs.size(), -1);
    result_.finish_s.assign(jobs.size(), -1);
    result_.waiting_seconds_by_gpus_held.assign(num_queues, std::vector<int64_t>(model.gpus + 1));
    for (size_t i = 0; i < jobs.size(); ++i) remaining_s_[i] = jobs[i].duration_s;
  }

  Result<ReplayResult> Run() {
    auto wall_start = std::chrono::steady_clock::now();
    for (const ReplayJob& job : jobs_) {
      if (job.gpus > model_.gpus) {
        return InvalidArgument("a job of " + std::to_string(job.gpus) + " GPUs cannot run on a cluster of " +
                               std::to_string(model_.gpus) + ": choose a larger cluster (--gpus)");
      }
    }
    while (done_ < jobs_.size()) {
      AdvanceTo(NextEventTime());
      EndFinishedJobs();
      AdmitArrivals();
      RETURN_IF_ERROR(Decide());
    }
    result_.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    return std::move(result_);
  }

 private:
  int64_t NextEventTime() const {
    int64_t next = std::numeric_limits<int64_t>::max();
    if (next_arrival_ < jobs_.size()) next = jobs_[next_arrival_].submit_s;
    for (int job : running_) next = std::min(next, now_s_ + remaining_s_[job]);
    return next;
  }

  // Accounts for [now, t), in which nothing changes, and moves the clock to t.
  void AdvanceTo(int64_t t) {
    const int64_t elapsed = t - now_s_;
    int64_t held_gpus = 0;
    for (int job : running_) {
      remaining_s_[job] -= elapsed;
      held_gpus += jobs_[job].gpus;
    }
    result_.busy_gpu_seconds += elapsed * held_gpus;
    bool any_waiting = false;
    for (size_t queue = 0; queue < waiting_per_queue_.size(); ++queue) {
      if (waiting_per_queue_[queue] == 0) continue;
      any_waiting = true;
      result_.waiting_seconds_by_gpus_held[queue][gpus_per_queue_[queue]] += elapsed;
    }
    if (any_waiting) {
      result_.waiting_seconds += elapsed;
      result_.busy_gpu_seconds_while_waiting += elapsed * held_gpus;
    }
    now_s_ = t;
  }

  void EndFinishedJobs() {
    std::erase_if(running_, [&](int job) {
      if (remaining_s_[job] > 0) return false;
      state_[job] = JobState::kDone;
      result_.finish_s[job] = now_s_;
      Release(job);
      view_.finished.push_back(job);
      ++done_;
      return true;
    });
  }

  void AdmitArrivals() {
    for (; next_arrival_ < jobs_.size() && jobs_[next_arrival_].submit_s <= now_s_; ++next_arrival_) {
      Wait(static_cast<int>(next_arrival_));
    }
  }

  Result<ReplayDecision> Ask() {
    view_.now_s = now_s_;
    view_.jobs = &jobs_;
    view_.remaining_s = &remaining_s_;
    view_.waiting = &waiting_;
    view_.running = &running_;
    view_.free_gpus = free_gpus_;
    view_.capacity_gpus = model_.gpus;
    ++result_.decisions;
    result_.most_waiting = std::max(result_.most_waiting, waiting_.size());
    Result<ReplayDecision> decision = policy_.Decide(view_);
    view_.new_waiting.clear();
    view_.finished.clear();
    return decision;
  }

  Status Decide() {
    ASSIGN_OR_RETURN(ReplayDecision decision, Ask());
    for (int job : decision.preempt) {
      if (!IsJob(job) || state_[job] != JobState::kRunning) {
        return Broken("preempted job " + Name(job) + ", not running");
      }
      std::erase(running_, job);
      Release(job);
      remaining_s_[job] += model_.preemption_cost_s;
      ++result_.preemptions;
      Wait(job);
    }
    for (int job : decision.start) {
      if (!IsJob(job) || state_[job] != JobState::kWaiting) return Broken("started job " + Name(job) + ", not waiting");
      if (jobs_[job].gpus > free_gpus_) {
        return Broken("started job " + Name(job) + " of " + std::to_string(jobs_[job].gpus) + " GPUs with " +
                      std::to_string(free_gpus_) + " free");
      }
      state_[job] = JobState::kRunning;
      running_.push_back(job);
      free_gpus_ -= jobs_[job].gpus;
      gpus_per_queue_[jobs_[job].queue] += jobs_[job].gpus;
      --waiting_per_queue_[jobs_[job].queue];
      if (result_.first_start_s[job] < 0) result_.first_start_s[job] = now_s_;
    }
    if (!decision.start.empty()) std::erase_if(waiting_, [&](int job) { return state_[job] != JobState::kWaiting; });
    if (running_.empty() && !waiting_.empty()) {
      return Broken("left the cluster idle with " + std::to_string(waiting_.size()) + " jobs waiting, the first " +
                    Name(waiting_.front()));
    }
    return Status::Ok();
  }

  void Wait(int job) {
    state_[job] = JobState::kWaiting;
    waiting_.push_back(job);
    view_.new_waiting.push_back(job);
    ++waiting_per_queue_[jobs_[job].queue];
  }

  void Release(int job) {
    free_gpus_ += jobs_[job].gpus;
    gpus_per_queue_[jobs_[job].queue] -= jobs_[job].gpus;
  }

  bool IsJob(int job) const { return job >= 0 && static_cast<size_t>(job) < jobs_.size(); }
  std::string Name(int job) const { return IsJob(job) ? JobId(job) : "job index " + std::to_string(job); }

  Status Broken(const std::string& what) const {
    return Internal("policy " + policy_.Name() + " " + what + " at t=" + std::to_string(now_s_) + " s");
  }

  const std::vector<ReplayJob>& jobs_;
  const ClusterModel& model_;
  ReplayPolicy& policy_;
  std::vector<JobState> state_;
  std::vector<int64_t> remaining_s_;
  std::vector<int> waiting_;
  std::vector<int> running_;
  std::vector<int> waiting_per_queue_;  // how many jobs of each queue wait
  std::vector<int> gpus_per_queue_;     // GPUs each queue's running jobs hold
  int free_gpus_;
  int64_t now_s_ = 0;
  size_t next_arrival_ = 0;
  size_t done_ = 0;
  ReplayView view_;
  ReplayResult result_;
};

}  // namespace

std::string JobId(int index) {
  char id[16];
  std::snprintf(id, sizeof id, "j%06d", index);
  return id;
}

std::vector<int> TaskGpus(int num_gpus) {
  if (num_gpus <= ClusterModel::kGpusPerNode) return {num_gpus};
  const int tasks = (num_gpus + ClusterModel::kGpusPerNode - 1) / ClusterModel::kGpusPerNode;
  return std::vector<int>(tasks, ClusterModel::kGpusPerNode);
}

Result<ReplayResult> Replay(const std::vector<ReplayJob>& jobs, int num_queues, const ClusterModel& model,
                            ReplayPolicy& policy) {
  return Simulation(jobs, num_queues, model, policy).Run();
}

}  // namespace shoal::bench
