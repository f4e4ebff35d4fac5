#include "bench/schedule/shoal_policy.h"

#include <algorithm>
#include <chrono>

namespace shoal::bench {

ShoalPolicy::ShoalPolicy(std::string name, const SchedulingConfig& config, std::vector<std::string> queue_names,
                         const ClusterModel& model, bool declared_estimates)
    : name_(std::move(name)), declared_estimates_(declared_estimates), queue_names_(std::move(queue_names)), model_(model) {
  input_.config = &config;
  input_.explain = false;  // the replay reads decisions, not the reasons' words
  input_.cluster.capacity = TaskResources(model.gpus);
  input_.cluster.free = input_.cluster.capacity;
  for (int gpu = 0; gpu < model.gpus; ++gpu) input_.cluster.free_gpus.insert(gpu);
}

Resources ShoalPolicy::TaskResources(int gpus) const {
  return {model_.cpus_per_gpu * gpus, model_.memory_per_gpu * gpus, gpus};
}

void ShoalPolicy::AddPending(const ReplayJob& job, int index) {
  PendingJob pending;
  pending.id = JobId(index);
  pending.queue = queue_names_[job.queue];
  pending.user = pending.queue;
  pending.submitted_ms = job.submit_s * 1000;
  for (int gpus : job.task_gpus) pending.tasks.push_back(TaskResources(gpus));
  pending.estimate_ms = declared_estimates_ ? job.duration_s * 1000 : 0;  // by default it is not told how long jobs run
  pending.attained = attained_[index];
  pending.has_run = waits_after_run_.count(index) > 0;
  pending.checkpointed = true;  // as its running jobs: the replay charges a preemption its restart cost
  index_of_id_[pending.id] = index;
  input_.pending.push_back(std::move(pending));
}

int64_t ShoalPolicy::WaitedSinceFirstRun(int index) const {
  const auto& [stopped_ms, waited_before_ms] = waits_after_run_.at(index);
  return waited_before_ms + (input_.now_ms - stopped_ms);
}

double ShoalPolicy::AttainedOf(int index) const {
  const std::string id = JobId(index);
  for (const RunningJob& job : input_.running) {
    if (job.id == id) {
      return job.attained_before + ServiceSize(job.total) * static_cast<double>(input_.now_ms - job.started_ms);
    }
  }
  return 0;
}

void ShoalPolicy::EndRunning(int index) {
  const std::string id = JobId(index);
  auto running =
      std::find_if(input_.running.begin(), input_.running.end(), [&](const RunningJob& job) { return job.id == id; });
  input_.cluster.free += running->total;
  input_.running.erase(running);
  for (int device : devices_of_running_[index]) input_.cluster.free_gpus.insert(device);
  devices_of_running_.erase(index);
}

Status ShoalPolicy::ApplyAdmission(const JobAdmission& admission, int64_t now_ms) {
  auto pending = std::find_if(input_.pending.begin(), input_.pending.end(),
                              [&](const PendingJob& job) { return job.id == admission.job_id; });
  if (pending == input_.pending.end()) {
    return Internal("Schedule admitted " + admission.job_id + ", which is not pending (or was admitted twice)");
  }
  Resources total;
  for (const Resources& task : pending->tasks) total += task;
  if (admission.task_gpus.size() != pending->tasks.size()) {
    return Internal("Schedule gave " + admission.job_id + " devices for " + std::to_string(admission.task_gpus.size()) +
                    " tasks; it has " + std::to_string(pending->tasks.size()));
  }
  if (!input_.cluster.free.Fits(total)) {
    return Internal("Schedule admitted " + admission.job_id + " needing " + total.ToString() + " with " +
                    input_.cluster.free.ToString() + " free");
  }
  std::vector<int> devices;
  for (size_t task = 0; task < admission.task_gpus.size(); ++task) {
    const std::vector<int>& given = admission.task_gpus[task];
    if (static_cast<int>(given.size()) != pending->tasks[task].gpus) {
      return Internal("Schedule gave task " + std::to_string(task) + " of " + admission.job_id + " " +
                      std::to_string(given.size()) + " devices; it asks for " +
                      std::to_string(pending->tasks[task].gpus));
    }
    for (int device : given) {
      if (input_.cluster.free_gpus.erase(device) == 0) {
        return Internal("Schedule gave " + admission.job_id + " device " + std::to_string(device) +
                        ", which is not free (or was given twice)");
      }
      devices.push_back(device);
    }
  }
  const int index = index_of_id_.at(admission.job_id);
  devices_of_running_[index] = std::move(devices);
  const bool resumed_past_bound = pending->has_run && WaitedPastBound(*pending, *input_.config, now_ms);
  if (pending->has_run) waits_after_run_[index].second = WaitedSinceFirstRun(index);
  input_.cluster.free -= total;
  input_.running.push_back({.id = pending->id,
                            .user = pending->user,
                            .queue = pending->queue,
                            .priority = pending->priority,
                            .total = total,
                            .started_ms = now_ms,
                            .estimate_ms = pending->estimate_ms,
                            .attained_before = pending->attained,
                            .aged = resumed_past_bound,
                            .checkpointed = true});  // the replay charges a preemption its restart cost
  // Pending jobs are in any order: the last takes the admitted one's place.
  *pending = std::move(input_.pending.back());
  input_.pending.pop_back();
  return Status::Ok();
}

Result<ReplayDecision> ShoalPolicy::Decide(const ReplayView& view) {
  for (int index : view.finished) EndRunning(index);
  input_.now_ms = view.now_s * 1000;
  for (int index : view.new_waiting) AddPending((*view.jobs)[index], index);
  for (PendingJob& pending : input_.pending) {
    if (pending.has_run) pending.waited_since_first_run_ms = WaitedSinceFirstRun(index_of_id_.at(pending.id));
  }

  credit_.Advance(input_);
  input_.queue_credit = credit_.credit();
  ReplayDecision replay_decision;
  RETURN_IF_ERROR(Pass(view, replay_decision));
  // The server stops the chosen jobs and, at its next pass a moment later, starts what
  // they made room for: here, a second pass at the same time.
  if (!replay_decision.preempt.empty()) RETURN_IF_ERROR(Pass(view, replay_decision));
  return replay_decision;
}

Status ShoalPolicy::Pass(const ReplayView& view, ReplayDecision& replay_decision) {
  auto start = std::chrono::steady_clock::now();
  ScheduleDecision decision = Schedule(input_);
  schedule_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ++schedule_calls_;

  const size_t not_admitted = input_.pending.size() - std::min(input_.pending.size(), decision.admit.size());
  if (decision.waiting.size() != not_admitted) {
    return Internal("Schedule gave reasons for " + std::to_string(decision.waiting.size()) + " jobs; " +
                    std::to_string(not_admitted) + " pending jobs were not admitted");
  }
  for (const JobAdmission& admission : decision.admit) {
    if (decision.waiting.count(admission.job_id)) {
      return Internal("Schedule both admitted " + admission.job_id + " and gave a reason why it waits");
    }
    RETURN_IF_ERROR(ApplyAdmission(admission, input_.now_ms));
    replay_decision.start.push_back(index_of_id_.at(admission.job_id));
  }
  for (const Preemption& preemption : decision.preempt) {
    auto index = index_of_id_.find(preemption.job_id);
    if (index == index_of_id_.end() || !devices_of_running_.count(index->second)) {
      return Internal("Schedule preempted " + preemption.job_id + ", which is not running");
    }
    attained_[index->second] = AttainedOf(index->second);
    EndRunning(index->second);
    auto started_now = std::find(replay_decision.start.begin(), replay_decision.start.end(), index->second);
    if (started_now != replay_decision.start.end()) {
      // Started by this decision's first pass: it simply does not start.
      replay_decision.start.erase(started_now);
      AddPending((*view.jobs)[index->second], index->second);
    } else {
      replay_decision.preempt.push_back(index->second);  // waits again from the replay's next call (its new_waiting)
      waits_after_run_[index->second].first = input_.now_ms;  // what it waited since its first start carries over
    }
  }
  return Status::Ok();
}

}  // namespace shoal::bench
