#include "server/job_manager.h"

#include <algorithm>
#include <filesystem>

#include "common/files.h"
#include "common/paths.h"
#include "common/log.h"
#include "common/units.h"
#include "runtime/framework.h"
#include "data/data_plan.h"
#include "server/saved_models.h"
#include "spec/spec_document.h"

namespace shoal {

JobManager::JobManager(JobStore& store, SeriesStore& series, ClusterBackend& backend, const Clock& clock,
                       std::string server_url, std::string home)
    : store_(store), series_(series), backend_(backend), clock_(clock), server_url_(std::move(server_url)), home_(std::move(home)),
      queues_(home_ + "/queues.yaml"), jobs_dir_(home_ + "/jobs") {
  ClusterCapacity capacity = backend_.Capacity();
  backend_.SetChangeCallback([this] { Wake(); });  // an AM exited: poll now, not at the next tick
  free_ = capacity.total;
  for (int i = 0; i < capacity.total.gpus; ++i) free_gpus_.insert(i);
}

JobManager::~JobManager() { Stop(); }

AttemptLaunch JobManager::LaunchFor(const JobRecord& job) const {
  const AttemptRecord& attempt = job.attempts.back();
  std::string token = attempt_tokens_ ? attempt_tokens_(job.id, attempt.number) : "";
  AttemptLaunch launch{job.id, attempt.number, server_url_, attempt.dir, job.spec, token, ServerInfoPath(home_)};
  // On Slurm, the queue's partition and QOS, unless the job's own slurm: section names them.
  if (const QueueSpec* queue = queues_.config().FindQueue(job.spec.queue)) {
    if (launch.spec.slurm.partition.empty()) launch.spec.slurm.partition = queue->slurm_partition;
    if (launch.spec.slurm.qos.empty()) launch.spec.slurm.qos = queue->slurm_qos;
  }
  return launch;
}

namespace {

// The attempts that count against max_attempts: all but the preempted ones.
int CountedAttempts(const JobRecord& job) {
  return static_cast<int>(std::count_if(job.attempts.begin(), job.attempts.end(),
                                        [](const AttemptRecord& a) { return a.state != AttemptState::kPreempted; }));
}

Json ResourcesJson(const Resources& r) {
  return Json{{"cpus", r.cpus}, {"memory_bytes", r.memory_bytes}, {"gpus", r.gpus}};
}

// How long the policy may assume the job runs: its estimate, else its time limit; 0 when
// it said neither.
int64_t EstimateOf(const JobSpec& spec) { return spec.estimate_ms > 0 ? spec.estimate_ms : spec.timeouts.job_ms; }

// Renames the attempt folders of `job` that its record does not know (their attempt ran,
// but the history could not record it), so that no new attempt writes into them.
// Returns a sentence for each, for the job's message.
std::vector<std::string> SetAsideUnrecordedAttempts(const std::string& jobs, const JobRecord& job, int64_t now_ms) {
  namespace fs = std::filesystem;
  std::vector<std::string> notes;
  std::error_code ec;
  fs::path jobs_dir = fs::path(jobs) / job.id;
  for (const auto& entry : fs::directory_iterator(jobs_dir, ec)) {
    std::string name = entry.path().filename().string();
    if (!name.starts_with("attempt-") || name.find_first_not_of("0123456789", 8) != std::string::npos) continue;
    int number = std::atoi(name.c_str() + 8);
    if (number <= static_cast<int>(job.attempts.size())) continue;
    fs::path aside = entry.path().string() + ".unrecorded-" + std::to_string(now_ms);
    fs::rename(entry.path(), aside, ec);
    if (ec) continue;
    LogError(job.id + ": attempt " + std::to_string(number) + " ran but its record was lost; its folder is now " +
             aside.string());
    notes.push_back("attempt " + std::to_string(number) + " ran but the history could not record it (see " +
                    aside.string() + ")");
  }
  return notes;
}

}  // namespace

Status JobManager::Recover() {
  {
    std::lock_guard lock(mutex_);
    RETURN_IF_ERROR(queues_.Load());
  }
  ASSIGN_OR_RETURN(std::vector<JobRecord> unfinished, store_.LoadUnfinished());
  for (JobRecord& job : unfinished) {
    for (const std::string& note : SetAsideUnrecordedAttempts(jobs_dir_, job, clock_.WallMillis())) {
      job.message = job.message.empty() ? note : job.message + "; " + note;
    }
  }
  // Whether each running attempt's AM lives is the backend's to say: asked before the lock.
  std::map<std::string, bool> alive;
  for (const JobRecord& job : unfinished) {
    if (job.state == JobState::kQueued || job.attempts.empty() || job.attempts.back().backend_id.empty()) continue;
    alive[job.id] = backend_.AttemptAlive(AttemptHandle{job.attempts.back().backend_id});
  }
  {
    std::lock_guard lock(mutex_);
    for (JobRecord& job : unfinished) {
      std::string id = job.id;
      live_[id] = std::move(job);
      JobRecord& record = live_[id];
      if (record.state == JobState::kQueued) {
        queue_.push_back(id);
        continue;
      }
      if (alive[id]) {
        // Re-attach: the AM keeps reporting (following server.json to a new port); its
        // resources stay taken.
        AttemptHandle handle{record.attempts.back().backend_id};
        handles_[id] = handle;
        Resources total;
        for (const auto& role : record.spec.roles) total += role.resources * role.instances;
        JobAdmission admission{id, total, record.attempts.back().task_gpus};
        for (const auto& gpus : admission.task_gpus) {
          for (int gpu : gpus) free_gpus_.erase(gpu);
        }
        free_ -= total;
        reserved_[id] = admission;
        LogInfo("re-attached " + id + " (attempt " + std::to_string(record.attempts.back().number) + ")");
      } else {
        if (!record.attempts.empty()) {
          record.attempts.back().message = "lost: the application master was gone when the server restarted";
        }
        EndAttempt(record, ExitInfo{255, 0});
      }
    }
  }
  Flush();
  return Status::Ok();
}

Status JobManager::Start() {
  RETURN_IF_ERROR(Recover());
  scheduler_ = std::thread([this] { SchedulerLoop(); });
  return Status::Ok();
}

void JobManager::Stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
    if (change_listener_) change_listener_();
  }
  changed_.notify_all();
  if (scheduler_.joinable()) scheduler_.join();
  {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return background_running_ == 0; });
  }
  Flush();
}

void JobManager::RunInBackground(std::function<void()> work) {
  ++background_running_;
  std::thread([this, work = std::move(work)] {
    work();
    std::lock_guard lock(mutex_);
    --background_running_;
    changed_.notify_all();
  }).detach();
}

JobRecord* JobManager::FindLive(const std::string& id) {
  int64_t seq = JobSeqFromId(id);
  if (seq <= 0) return nullptr;
  auto it = live_.find(JobIdFor(seq));
  return it == live_.end() ? nullptr : &it->second;
}

void JobManager::Changed(JobRecord& job) {
  ++job.version;
  dirty_.insert(job.id);
  wake_ = true;
  changed_.notify_all();
  if (change_listener_) change_listener_();
}

void JobManager::Shown(JobRecord& job) {
  ++job.version;
  changed_.notify_all();
  if (change_listener_) change_listener_();
}

void JobManager::Wake() {
  {
    std::lock_guard lock(mutex_);
    wake_ = true;
  }
  changed_.notify_all();
}

void JobManager::Flush() {
  std::lock_guard flushing(flush_mutex_);
  std::vector<JobRecord> records;
  {
    std::lock_guard lock(mutex_);
    for (const std::string& id : dirty_) {
      if (auto it = live_.find(id); it != live_.end()) records.push_back(it->second);
    }
    dirty_.clear();
  }
  std::vector<std::string> failed;
  Status first_error;
  for (const JobRecord& record : records) {
    if (Status s = store_.Update(record); !s.ok()) {
      failed.push_back(record.id);
      if (first_error.ok()) first_error = s;
    }
  }
  std::lock_guard lock(mutex_);
  if (failed.empty()) {
    if (history_failing_) LogInfo("the job history is written again");
    history_failing_ = false;
    return;
  }
  // Kept dirty: the next pass writes them again (a full disk that was freed, say).
  dirty_.insert(failed.begin(), failed.end());
  if (!history_failing_) {
    LogError("cannot write the job history: " + first_error.message() + "; the changes of " +
             std::to_string(failed.size()) + " job(s) are kept and written again until it works");
  }
  history_failing_ = true;
}

Status JobManager::ResolveImages(JobSpec& spec) const {
  bool named = spec.image || std::any_of(spec.roles.begin(), spec.roles.end(), [](const RoleSpec& r) { return r.image; });
  if (!named) return Status::Ok();
  if (!images_) {
    return InvalidArgument("image: this server runs no task in an image (its cluster has no image support); fix: "
                           "drop `image:` from the spec");
  }
  return images_(spec);
}

Result<std::string> JobManager::Submit(JobSpec spec) {
  if (!spec.cluster.empty() && spec.cluster != backend_.name()) {
    return InvalidArgument("cluster: this server runs jobs on the " + backend_.name() + " cluster, not on " + spec.cluster +
                           "; fix: submit to a server started with `shoal server --cluster " + spec.cluster +
                           "` (set SHOAL_SERVER or --home), or drop the cluster field");
  }
  RETURN_IF_ERROR(backend_.Accepts(spec));
  if (accounts_) RETURN_IF_ERROR(accounts_(spec).status());
  std::vector<SpecIssue> issues = CheckFits(spec, backend_.Capacity());
  if (const FrameworkAdapter* framework = FindFramework(spec.framework)) {
    auto more = framework->Validate(spec);
    issues.insert(issues.end(), more.begin(), more.end());
  }
  RETURN_IF_ERROR(FormatIssues(issues, SourceMap("job spec")));
  RETURN_IF_ERROR(CheckQueue(spec));
  RETURN_IF_ERROR(ResolveImages(spec));
  JobRecord job;
  job.spec = std::move(spec);
  job.created_ms = clock_.WallMillis();
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return Unavailable("the server is shutting down");
  }
  RETURN_IF_ERROR(store_.Insert(job));  // gives the job its id; outside the lock
  std::string id = job.id;
  std::lock_guard lock(mutex_);
  live_[id] = std::move(job);
  queue_.push_back(id);
  wake_ = true;
  changed_.notify_all();
  return id;
}

Status JobManager::CheckQueue(const JobSpec& spec) {
  SchedulingConfig config;
  {
    std::lock_guard lock(mutex_);
    queues_.Refresh();
    config = queues_.config();
  }
  const QueueSpec* queue = config.FindQueue(spec.queue);
  if (!queue) {
    std::string names;
    for (const QueueSpec& q : config.queues) names += (names.empty() ? "" : ", ") + q.name;
    return InvalidArgument("queue: this server has no queue '" + spec.queue + "'; use one of: " + names +
                           " (shoal queues shows them)");
  }
  Resources need = spec.TotalResources();
  Resources capacity = backend_.Capacity().total;
  Resources most = ShareOf(capacity, queue->max);
  if (queue->max < 1 && !WithinLimit(most, Resources{}, need)) {
    return InvalidArgument("queue: the job needs " + need.ToString() + ", more than queue " + queue->name +
                           " may ever use (" + most.ToString() + ", its max); submit it to a larger queue or ask less");
  }
  if (spec.preemption_grace_ms > config.max_preemption_grace_ms) {
    return InvalidArgument("preemption_grace: " + FormatDuration(spec.preemption_grace_ms) + " is longer than this server allows (" +
                           FormatDuration(config.max_preemption_grace_ms) +
                           ", max_preemption_grace in its queues.yaml); ask for at most that");
  }
  const Resources& limit = queue->user_limit;
  if (!WithinLimit(limit, Resources{}, need)) {
    return InvalidArgument("queue: the job needs " + need.ToString() + ", more than queue " + queue->name +
                           " allows one user (" + limit.ToString() + ", 0 meaning no limit); ask less or use another queue");
  }
  return Status::Ok();
}

namespace {

// queues.yaml's service_levels as it gives them: GPU-hours (kept as size x milliseconds).
Json ServiceLevelHours(const std::vector<double>& levels) {
  Json hours = Json::array();
  for (double level : levels) hours.push_back(level / 3.6e6);
  return hours;
}

// A queue's credit as time at its whole guarantee it is owed (negative: it owes it).
int64_t CreditMillis(const QueueSpec& queue, const std::map<std::string, double>& credit) {
  auto found = credit.find(queue.name);
  if (found == credit.end() || queue.guarantee <= 0) return 0;
  return static_cast<int64_t>(found->second / queue.guarantee);
}

}  // namespace

Json JobManager::Queues() {
  std::lock_guard lock(mutex_);
  queues_.Refresh();
  const SchedulingConfig& config = queues_.config();
  Resources capacity = backend_.Capacity().total;
  std::map<std::string, Resources> used;
  std::map<std::string, int> running;
  for (const auto& [id, admission] : reserved_) {
    const std::string& queue = live_.at(id).spec.queue;
    used[queue] += admission.total;
    ++running[queue];
  }
  std::map<std::string, std::vector<std::string>> waiting;
  for (const std::string& id : queue_) waiting[live_.at(id).spec.queue].push_back(id);
  Json queues = Json::array();
  for (const QueueSpec& queue : config.queues) {
    double share = DominantShare(used[queue.name], capacity);
    Json slurm = Json::object();  // what the queue's jobs ask Slurm for (the server's defaults where empty)
    if (!queue.slurm_partition.empty()) slurm["partition"] = queue.slurm_partition;
    if (!queue.slurm_qos.empty()) slurm["qos"] = queue.slurm_qos;
    queues.push_back(Json{{"name", queue.name},
                          {"slurm", slurm},
                          {"guarantee", queue.guarantee},
                          {"max", queue.max},
                          {"user_limit", ResourcesJson(queue.user_limit)},
                          {"used", ResourcesJson(used[queue.name])},
                          {"share", share},
                          {"borrowing", share > queue.guarantee + 1e-9},
                          {"credit_ms", CreditMillis(queue, queue_credit_.credit())},
                          {"preempt_lower_priority", queue.preempt_lower_priority},
                          {"running", running[queue.name]},
                          {"waiting", waiting[queue.name]}});
  }
  // Queues the file no longer lists that still hold jobs: their running jobs run to their
  // end, their waiting ones wait until killed (each one's reason says so).
  std::set<std::string> unlisted;
  for (const auto& [name, count] : running) unlisted.insert(name);
  for (const auto& [name, ids] : waiting) unlisted.insert(name);
  Json unconfigured = Json::array();
  for (const std::string& name : unlisted) {
    if (config.FindQueue(name)) continue;
    unconfigured.push_back(Json{{"name", name},
                                {"used", ResourcesJson(used[name])},
                                {"running", running[name]},
                                {"waiting", waiting[name]}});
  }
  return Json{{"queues", queues},
              {"unconfigured", unconfigured},
              {"capacity", ResourcesJson(capacity)},
              {"max_wait_ms", config.max_wait_ms},
              {"max_wait_to_resume_ms", config.max_wait_to_resume_ms},
              {"max_preemption_grace_ms", config.max_preemption_grace_ms},
              {"service_levels_gpu_hours", ServiceLevelHours(config.service_levels)},
              {"min_run_before_preemption_ms", config.min_run_before_preemption_ms},
              {"file", queues_.path()},
              {"error", queues_.error()}};
}

Result<Json> JobManager::Kill(const std::string& id) {
  Json summary = KillLive(id);
  Flush();
  if (!summary.is_null()) return summary;
  ASSIGN_OR_RETURN(auto stored, store_.Load(JobSeqFromId(id)));
  if (!stored) return NotFound("no job '" + id + "'; `shoal list` shows the jobs");
  return protocol::Encode(stored->Summary());  // already finished: nothing to kill
}

Json JobManager::KillLive(const std::string& id) {
  std::lock_guard lock(mutex_);
  JobRecord* job = FindLive(id);
  if (!job) return Json();
  if (IsFinal(job->state) || job->kill_requested) return protocol::Encode(job->Summary());
  job->kill_requested = true;
  if (job->state == JobState::kQueued) {
    std::erase(queue_, job->id);
    job->state = JobState::kKilled;
    job->message = "killed by the user while queued";
    job->finished_ms = clock_.WallMillis();
  } else if (handles_.count(job->id)) {
    job->message = "killing";
    job->preempt_kill_at_ms = 0;
    KillInBackground(*job);
  } else if (starting_.count(job->id)) {
    job->message = "killing";  // Started() kills the attempt once the backend has it
  }
  Changed(*job);
  return protocol::Encode(job->Summary());
}

Result<Json> JobManager::Get(const std::string& id, int64_t wait_version, int wait_ms, const TaskPageQuery* tasks) {
  // A page of a big job's tasks is cut before encoding: only its tasks become JSON.
  auto encode = [tasks](protocol::JobDetail detail) {
    if (!tasks) return protocol::Encode(detail);
    Json added = PageTasks(detail, *tasks);
    Json encoded = protocol::Encode(detail);
    encoded.update(added);
    return encoded;
  };
  std::unique_lock lock(mutex_);
  JobRecord* job = FindLive(id);
  if (!job) {
    lock.unlock();
    int64_t seq = JobSeqFromId(id);
    if (seq <= 0) return NotFound("'" + id + "' is not a job id; job ids look like job-12");
    ASSIGN_OR_RETURN(auto stored, store_.Load(seq));
    if (!stored) return NotFound("no job '" + id + "'; `shoal list` shows the jobs");
    return encode(stored->Detail());
  }
  if (wait_version > 0) {
    std::string key = job->id;
    clock_.WaitFor(changed_, lock, std::clamp(wait_ms, 0, 60'000), [&] {
      auto it = live_.find(key);
      return stopping_ || it == live_.end() || it->second.version > wait_version;
    });
    job = FindLive(key);
    if (!job) return NotFound("job '" + id + "' is gone");
  }
  protocol::JobDetail detail = job->Detail();
  if (TaskLimitsNote limits = backend_.TaskLimits(); !limits.enforced) detail.limits_not_enforced = limits.detail;
  lock.unlock();  // the copy is the job's state; encoding it needs no lock
  return encode(std::move(detail));
}

bool JobManager::HasNewerThan(const std::string& id, int64_t version) {
  std::lock_guard lock(mutex_);
  const JobRecord* job = FindLive(id);
  return stopping_ || !job || job->version > version;
}

Result<Json> JobManager::List(const JobFilter& filter) {
  ASSIGN_OR_RETURN(auto listed, store_.List(filter));
  // A live job is shown as it is now, even when the history could not be written (a full
  // disk): the list and a job's status never disagree.
  protocol::JobList list{.jobs = std::move(listed.first), .total = listed.second, .limit = filter.limit, .offset = filter.offset};
  {
    std::lock_guard lock(mutex_);
    for (protocol::JobSummary& summary : list.jobs) {
      if (JobRecord* job = FindLive(summary.id)) summary = job->Summary();
    }
  }
  return protocol::Encode(list);
}

namespace {

// The nodes for the API; where the cluster does not say what is allocated (one local
// machine), it is what admission has handed out.
Json NodesJson(const std::vector<ClusterNode>& nodes, const Resources& total, const Resources& free) {
  Json out = Json::array();
  for (const ClusterNode& node : nodes) {
    Resources allocated = node.allocated.value_or(Resources{total.cpus - free.cpus, total.memory_bytes - free.memory_bytes,
                                                            total.gpus - free.gpus});
    out.push_back(Json{{"name", node.name},
                       {"state", node.state},
                       {"reason", node.reason},
                       {"capacity", ResourcesJson(node.capacity)},
                       {"allocated", ResourcesJson(allocated)}});
  }
  return out;
}

}  // namespace

Json JobManager::ClusterInfo() {
  ClusterCapacity capacity = backend_.Capacity();
  TaskLimitsNote limits = backend_.TaskLimits();
  std::vector<ClusterNode> nodes = backend_.Nodes();  // outside mutex_: it may ask the cluster
  std::lock_guard lock(mutex_);
  return Json{{"backend", backend_.name()},
              {"total", ResourcesJson(capacity.total)},
              {"largest_node", ResourcesJson(capacity.largest)},
              {"free", ResourcesJson(free_)},
              {"queued", queue_.size()},
              {"running", handles_.size()},
              {"task_limits", Json{{"enforced", limits.enforced}, {"detail", limits.detail}}},
              {"nodes", NodesJson(nodes, capacity.total, free_)}};
}

Result<Json> JobManager::AttemptForAm(const std::string& id, int attempt) {
  std::lock_guard lock(mutex_);
  JobRecord* job = FindLive(id);
  if (!job || job->attempts.empty() || job->attempts.back().number != attempt) {
    return NotFound("job '" + id + "' has no running attempt " + std::to_string(attempt));
  }
  return protocol::Encode(protocol::AttemptFetchReply{job->spec, job->attempts.back().task_gpus});
}

Result<Json> JobManager::Report(const std::string& id, int attempt_number, protocol::AttemptReport report) {
  for (const auto& task : report.tasks) {
    if (task.heartbeat_rtt_ms >= 0) heartbeat_rtt_.Observe(task.heartbeat_rtt_ms / 1000.0);  // < 0: none yet
  }
  auto running = [&](JobRecord* job) {
    return job && !job->attempts.empty() && job->attempts.back().number == attempt_number;
  };
  int64_t seq = 0;
  {
    std::lock_guard lock(mutex_);
    JobRecord* job = FindLive(id);
    if (!running(job)) return NotFound("job '" + id + "' has no attempt " + std::to_string(attempt_number) + " running");
    seq = job->seq;
  }
  // The series first, outside the lock. When they cannot be stored (the history's disk is
  // full) the report's state is applied all the same, and the reply tells the AM to keep
  // the series for a later report: a full disk must not hide that a job ended.
  bool series_stored = true;
  if (!report.series.empty()) {
    Status appended = series_.Append(seq, attempt_number, report.series);
    series_stored = appended.ok();
    if (!series_stored && !series_failing_.exchange(true)) LogError("cannot store the tasks' series: " + appended.ToString());
    if (series_stored && series_failing_.exchange(false)) LogInfo("the tasks' series are stored again");
  }
  Json reply;
  {
    std::lock_guard lock(mutex_);
    JobRecord* job = FindLive(id);
    if (!running(job)) return NotFound("job '" + id + "' has no attempt " + std::to_string(attempt_number) + " running");
    AttemptRecord& attempt = job->attempts.back();
    attempt.tasks = std::move(report.tasks);
    attempt.state = report.state.value_or(attempt.state);
    attempt.message = report.message.value_or(attempt.message);
    attempt.am_addr = report.am_addr.value_or(attempt.am_addr);
    attempt.final_reported = attempt.final_reported || report.final;
    if (report.board_url) attempt.board_url = *report.board_url;
    for (const protocol::SavedModelUpdate& update : report.saved_models) {
      ApplySavedModelUpdate(attempt.saved_models, update, clock_.WallMillis());
    }
    double sum = 0;
    int workers = 0;
    for (const auto& task : attempt.tasks) {
      if (task.service) continue;
      sum += task.progress;
      ++workers;
    }
    job->progress = workers ? sum / workers : 0;
    if (!job->kill_requested && job->preempt_reason.empty()) job->message = attempt.message;
    Changed(*job);
    reply = protocol::Encode(
        protocol::ReportReply{PendingSaveRequests(attempt.saved_models), series_stored, PreemptNoticeFor(*job)});
  }
  Flush();
  return reply;
}

Result<Json> JobManager::SaveModel(const std::string& id) {
  std::optional<protocol::SavedModelView> entry;
  {
    std::lock_guard lock(mutex_);
    JobRecord* job = FindLive(id);
    if (job) {
      if (job->state != JobState::kRunning || job->attempts.empty() || job->kill_requested) {
        return FailedPrecondition("job '" + job->id + "' is " +
                                  std::string(job->kill_requested ? "being killed" : Name(job->state)) +
                                  "; a model can be saved only while the job runs");
      }
      if (job->spec.outputs.empty()) {
        return FailedPrecondition("job '" + job->id + "' has no outputs, so there is no model to save: add an "
                                  "`outputs:` entry to its spec (docs/data.md)");
      }
      AttemptRecord& attempt = job->attempts.back();
      entry = NewSaveRequest(attempt.saved_models, clock_.WallMillis());
      entry->targets = data::SavedModelFolders(job->spec, entry->name);
      attempt.saved_models.push_back(*entry);
      Changed(*job);
      entry->attempt = attempt.number;
    }
  }
  if (entry) {
    Flush();
    return protocol::Encode(*entry);
  }
  ASSIGN_OR_RETURN(auto stored, store_.Load(JobSeqFromId(id)));
  if (!stored) return NotFound("no job '" + id + "'; `shoal list` shows the jobs");
  return FailedPrecondition("job '" + stored->id + "' has ended (" + std::string(Name(stored->state)) +
                            "); a model can be saved only while the job runs");
}

Result<Json> JobManager::Series(const std::string& id, int attempt, SeriesCursor after) {
  ASSIGN_OR_RETURN(Json detail, Get(id, 0, 0));
  int attempts = static_cast<int>(detail["attempts"].size());
  if (attempt <= 0) attempt = attempts;
  if (attempt > attempts) {
    return NotFound("job '" + id + "' has " + std::to_string(attempts) + " attempt(s), not " + std::to_string(attempt));
  }
  Json tasks = Json::array();
  if (attempt == 0) return Json{{"attempt", 0}, {"tasks", tasks}, {"next", {{"sample", 0}, {"point", 0}}}};
  ASSIGN_OR_RETURN(LoadedSeries loaded, series_.Load(JobSeqFromId(id), attempt, after));
  for (const TaskSeries& task : loaded.tasks) tasks.push_back(ToJson(task));
  return Json{{"attempt", attempt}, {"tasks", tasks}, {"next", {{"sample", loaded.next.sample}, {"point", loaded.next.point}}}};
}

Result<JobMetrics> JobManager::Metrics() {
  JobMetrics metrics;
  ASSIGN_OR_RETURN(metrics.jobs_by_state, store_.CountByState());
  metrics.heartbeat_rtt = heartbeat_rtt_.Snapshot();
  std::lock_guard lock(mutex_);
  metrics.queue_length = static_cast<int64_t>(queue_.size());
  metrics.scheduler_passes = passes_.load();
  for (const auto& [id, job] : live_) {
    if (job.state != JobState::kRunning || job.attempts.empty()) continue;
    for (const auto& task : job.attempts.back().tasks) ++metrics.tasks_by_state[Name(task.state)];
  }
  return metrics;
}

Result<std::string> JobManager::LogPath(const std::string& id, int attempt, const std::string& role, int index) {
  ASSIGN_OR_RETURN(Json detail, Get(id, 0, 0));
  const Json& attempts = detail["attempts"];
  if (attempts.empty()) return NotFound("job '" + id + "' has not started yet: no logs");
  if (attempt <= 0) attempt = static_cast<int>(attempts.size());
  if (attempt > static_cast<int>(attempts.size())) {
    return NotFound("job '" + id + "' has " + std::to_string(attempts.size()) + " attempt(s), not " + std::to_string(attempt));
  }
  const std::string dir = attempts[attempt - 1].value("dir", "");
  if (role == kAmLogRole) return dir + "/am.log";  // the attempt's application master
  JobSpec spec = JobSpecFromDocument(detail["spec"]);
  const RoleSpec* r = spec.FindRole(role);
  if (!r) return NotFound("job '" + id + "' has no role '" + role + "' (--role am: its application master's log)");
  if (index < 0 || index >= r->instances) {
    return NotFound("role '" + role + "' has tasks 0 to " + std::to_string(r->instances - 1) + ", not " + std::to_string(index));
  }
  return dir + "/" + role + "-" + std::to_string(index) + ".log";
}

void JobManager::Release(const std::string& id) {
  auto it = reserved_.find(id);
  if (it == reserved_.end()) return;
  free_ += it->second.total;
  for (const auto& gpus : it->second.task_gpus) free_gpus_.insert(gpus.begin(), gpus.end());
  reserved_.erase(it);
}

void JobManager::EndAttempt(JobRecord& job, const ExitInfo& am_exit, const std::string& cluster_failure,
                            const std::vector<std::string>& failed_hosts, bool cluster_preempted) {
  AttemptRecord& attempt = job.attempts.back();
  bool reported_end = attempt.final_reported && IsFinal(attempt.state);
  // Shoal's preemption, or the cluster's own (Slurm's). One that came after the attempt
  // had already succeeded changes nothing.
  if (cluster_preempted && job.preempt_reason.empty()) job.preempt_reason = cluster_failure;
  const bool preempted = !job.preempt_reason.empty() && !job.kill_requested &&
                         !(reported_end && attempt.state == AttemptState::kSucceeded);
  if (preempted) {
    attempt.state = AttemptState::kPreempted;
    attempt.message = "preempted: " + job.preempt_reason;
  } else if (!cluster_failure.empty() && !job.kill_requested) {
    // The cluster ended the attempt (a node failed, preemption): whatever the AM said as
    // it was stopped, the attempt failed and may be retried.
    attempt.state = AttemptState::kFailed;
    attempt.message = cluster_failure;
  } else if (!reported_end) {
    if (job.kill_requested) {
      attempt.state = AttemptState::kKilled;
      attempt.message = "killed by the user";
    } else {
      attempt.state = AttemptState::kFailed;
      if (!attempt.message.starts_with("lost:")) {
        attempt.message = "the application master ended (" + am_exit.Describe() +
                          ") before the attempt finished; see " + attempt.dir + "/am.log";
      }
    }
  }
  attempt.finished_ms = clock_.WallMillis();
  // A task on a node that failed says so, whatever its agent's end looked like from afar.
  for (auto& task : attempt.tasks) {
    bool on_failed_node = std::find(failed_hosts.begin(), failed_hosts.end(), task.host) != failed_hosts.end();
    if (!on_failed_node || task.state == TaskState::kSucceeded || job.kill_requested) continue;
    if (!IsFinal(task.state)) task.state = TaskState::kLost;
    task.message = "its node failed: " + cluster_failure;
    if (task.finished_ms == 0) task.finished_ms = attempt.finished_ms;
  }
  // Whatever the AM last reported, the attempt is over: none of its tasks still runs.
  for (auto& task : attempt.tasks) {
    if (IsFinal(task.state)) continue;
    task.state = job.kill_requested || preempted ? TaskState::kKilled : TaskState::kLost;
    task.message = preempted            ? "preempted"
                   : job.kill_requested ? "killed by the user"
                                        : "the application master ended before this task did (" + am_exit.Describe() + ")";
    if (task.finished_ms == 0) task.finished_ms = attempt.finished_ms;
  }
  handles_.erase(job.id);
  Release(job.id);
  job.message = attempt.message;
  job.preempt_reason.clear();
  job.preempt_grace_ends_ms = job.preempt_kill_at_ms = 0;
  if (preempted) {
    // Back in its queue, in its place (the policy orders by submission); the attempt does
    // not count against max_attempts.
    job.state = JobState::kQueued;
    job.message = "attempt " + std::to_string(attempt.number) + " was " + attempt.message + "; back in queue " + job.spec.queue;
    queue_.push_back(job.id);
  } else if (attempt.state == AttemptState::kSucceeded) {
    job.state = JobState::kSucceeded;
    job.progress = 1.0;
  } else if (job.kill_requested || attempt.state == AttemptState::kKilled) {
    job.state = JobState::kKilled;
    job.message = attempt.message.empty() ? "killed" : attempt.message;
  } else if (CountedAttempts(job) < job.spec.max_attempts) {
    job.state = JobState::kQueued;
    job.message = "attempt " + std::to_string(attempt.number) + " failed (" + attempt.message + "); retrying";
    queue_.push_front(job.id);
  } else {
    job.state = JobState::kFailed;
  }
  if (IsFinal(job.state)) job.finished_ms = clock_.WallMillis();
  AttemptLaunch launch = LaunchFor(job);
  // Sweep anything of the attempt that outlived its AM (a user process that left its group).
  RunInBackground([this, launch] { backend_.CleanUpAttempt(launch); });
  Changed(job);
}

void JobManager::ApplyPolls(const std::vector<Polled>& polled) {
  for (const Polled& p : polled) {
    auto it = handles_.find(p.id);
    if (it == handles_.end() || it->second.backend_id != p.handle.backend_id) continue;  // ended meanwhile
    JobRecord& job = live_[p.id];
    if (p.exit) {
      EndAttempt(job, *p.exit, p.note.ended_by_cluster ? p.note.message : "", p.note.failed_hosts, p.note.preempted);
      continue;
    }
    // Until its AM reports, an attempt shows what the cluster says of it (Slurm's reasons).
    AttemptRecord& attempt = job.attempts.back();
    if (!p.note.message.empty() && attempt.am_addr.empty() && attempt.message != p.note.message && !job.kill_requested) {
      attempt.message = job.message = p.note.message;
      Changed(job);
    }
  }
}

namespace {

// The service a job had in its ended attempts (scheduling/schedule_policy.h): size x ms.
double AttainedService(const JobRecord& job) {
  const double size = ServiceSize(job.spec.TotalResources());
  double attained = 0;
  for (const AttemptRecord& attempt : job.attempts) {
    if (attempt.finished_ms > attempt.started_ms && attempt.started_ms > 0) {
      attained += size * static_cast<double>(attempt.finished_ms - attempt.started_ms);
    }
  }
  return attained;
}

// What the job has waited, in all, since its first attempt started: the gaps between its
// attempts that started before `until`, and from the last one's end to `until`. Zero for a
// job that has not run before then.
int64_t WaitedSinceFirstRun(const JobRecord& job, int64_t until) {
  int64_t waited = 0, last_end = 0;
  for (const AttemptRecord& attempt : job.attempts) {
    if (attempt.started_ms <= 0 || attempt.started_ms >= until) break;
    if (last_end > 0) waited += attempt.started_ms - last_end;
    last_end = attempt.finished_ms > 0 ? attempt.finished_ms : until;
  }
  return last_end > 0 ? waited + std::max<int64_t>(0, until - last_end) : 0;
}

bool HasCheckpoints(const JobSpec& spec) {
  return std::any_of(spec.roles.begin(), spec.roles.end(),
                     [&](const RoleSpec& role) { return spec.CheckpointOf(role) != nullptr; });
}

}  // namespace

ScheduleInput JobManager::ScheduleInputNow() const {
  ScheduleInput input;
  input.cluster = ClusterState{backend_.Capacity().total, free_, free_gpus_};
  input.now_ms = clock_.WallMillis();
  for (const std::string& id : queue_) {
    const JobRecord& job = live_.at(id);
    PendingJob pending{id, job.spec.user, job.spec.queue, job.spec.priority, job.created_ms, {}, EstimateOf(job.spec),
                       AttainedService(job)};
    pending.has_run = !job.attempts.empty();
    pending.checkpointed = HasCheckpoints(job.spec);
    pending.waited_since_first_run_ms = WaitedSinceFirstRun(job, input.now_ms);
    for (const auto& role : job.spec.roles) {
      for (int i = 0; i < role.instances; ++i) pending.tasks.push_back(role.resources);
    }
    input.pending.push_back(std::move(pending));
  }
  for (const auto& [id, admission] : reserved_) {
    const JobRecord& job = live_.at(id);
    int64_t started = job.attempts.empty() ? input.now_ms : job.attempts.back().started_ms;
    RunningJob running{id, job.spec.user, job.spec.queue, job.spec.priority, admission.total, started,
                       EstimateOf(job.spec), !job.preempt_reason.empty() || job.kill_requested};
    running.attained_before = AttainedService(job);
    // Resumed for having waited past max_wait_to_resume: an attempt after one that ran.
    running.aged = job.attempts.size() > 1 && WaitedSinceFirstRun(job, started) >= queues_.config().max_wait_to_resume_ms;
    running.checkpointed = HasCheckpoints(job.spec);
    input.running.push_back(std::move(running));
  }
  return input;
}

std::vector<std::string> JobManager::AdmitQueued() {
  std::vector<std::string> admitted;
  queues_.Refresh();
  ScheduleInput input = ScheduleInputNow();
  input.config = &queues_.config();
  queue_credit_.Advance(input);  // also with nothing waiting: then queues lose their credit
  if (queue_.empty()) return admitted;
  input.queue_credit = queue_credit_.credit();
  ScheduleDecision decision = Schedule(input);
  for (JobAdmission& admission : decision.admit) {
    JobRecord& job = live_[admission.job_id];
    std::erase(queue_, job.id);
    AttemptRecord attempt;
    attempt.number = static_cast<int>(job.attempts.size()) + 1;
    attempt.started_ms = clock_.WallMillis();
    attempt.dir = jobs_dir_ + "/" + job.id + "/attempt-" + std::to_string(attempt.number);
    attempt.task_gpus = admission.task_gpus;
    job.attempts.push_back(attempt);
    job.state = JobState::kRunning;
    job.progress = 0;
    job.wait_reason.clear();
    job.expected_start_ms = 0;
    if (job.started_ms == 0) job.started_ms = attempt.started_ms;
    free_ -= admission.total;
    for (const auto& gpus : admission.task_gpus) {
      for (int gpu : gpus) free_gpus_.erase(gpu);
    }
    reserved_[job.id] = std::move(admission);
    starting_.insert(job.id);
    admitted.push_back(job.id);
    Changed(job);
  }
  for (const Preemption& preemption : decision.preempt) StartPreempting(live_[preemption.job_id], preemption.reason);
  for (const auto& [id, reason] : decision.waiting) {
    JobRecord& job = live_[id];
    auto expected = decision.reserved_start_ms.find(id);
    int64_t expected_ms = expected == decision.reserved_start_ms.end() ? 0 : expected->second;
    if (job.wait_reason == reason && job.expected_start_ms == expected_ms) continue;
    job.wait_reason = reason;
    job.expected_start_ms = expected_ms;
    Shown(job);  // a new reason is news to watchers, not to the history
  }
  return admitted;
}

void JobManager::StartPreempting(JobRecord& job, const std::string& reason) {
  auto handle = handles_.find(job.id);
  if (handle == handles_.end() || job.kill_requested || !job.preempt_reason.empty()) return;  // still starting, or ending
  job.preempt_reason = reason;
  LogInfo(job.id + " preempted: " + reason);
  if (!job.attempts.back().am_addr.empty()) {
    // Its AM serves: the next report's reply tells it, and its programs have their grace
    // to checkpoint. Whatever is left when that and the last uploads are over is killed.
    int64_t now = clock_.NowMillis();
    job.preempt_grace_ends_ms = now + job.spec.preemption_grace_ms;
    job.preempt_kill_at_ms = job.preempt_grace_ends_ms + protocol::kPreemptUploadAllowanceMs + kPreemptKillMarginMs;
    job.message = "being preempted: " + reason + "; its programs have " + FormatDuration(job.spec.preemption_grace_ms) +
                  " to checkpoint";
  } else {
    job.message = "being preempted: " + reason;
    KillInBackground(job);
  }
  Changed(job);
}

void JobManager::KillInBackground(const JobRecord& job) {
  auto handle = handles_.find(job.id);
  if (handle == handles_.end()) return;
  AttemptLaunch launch = LaunchFor(job);
  AttemptHandle started = handle->second;
  RunInBackground([this, launch, started] { backend_.KillAttempt(launch, started); });
}

void JobManager::EnforcePreemptionDeadlines() {
  int64_t now = clock_.NowMillis();
  for (auto& [id, job] : live_) {
    if (job.preempt_kill_at_ms == 0 || now < job.preempt_kill_at_ms) continue;
    job.preempt_kill_at_ms = 0;
    LogInfo(id + ": the preempted attempt did not end within its grace and upload allowance; killing it");
    KillInBackground(job);
  }
}

std::optional<protocol::PreemptNotice> JobManager::PreemptNoticeFor(const JobRecord& job) const {
  if (job.preempt_reason.empty() || job.preempt_grace_ends_ms == 0) return std::nullopt;
  return protocol::PreemptNotice{job.preempt_reason, std::max<int64_t>(0, job.preempt_grace_ends_ms - clock_.NowMillis())};
}

void JobManager::Started(const std::string& id, const Result<AttemptHandle>& handle) {
  starting_.erase(id);
  JobRecord& job = live_[id];
  AttemptRecord& attempt = job.attempts.back();
  if (!handle.ok()) {
    Release(id);
    attempt.state = AttemptState::kFailed;
    attempt.message = handle.status().message();
    attempt.final_reported = true;
    attempt.finished_ms = clock_.WallMillis();
    job.state = job.kill_requested ? JobState::kKilled : JobState::kFailed;
    job.message = handle.status().message();
    job.finished_ms = clock_.WallMillis();
    Changed(job);
    return;
  }
  attempt.backend_id = handle->backend_id;
  handles_[id] = *handle;
  Changed(job);
  if (job.kill_requested) KillInBackground(job);  // killed while its attempt was being started
}

void JobManager::Step() {
  std::lock_guard stepping(step_mutex_);
  std::vector<std::pair<std::string, AttemptHandle>> watched;
  {
    std::lock_guard lock(mutex_);
    watched.assign(handles_.begin(), handles_.end());
  }
  std::vector<Polled> polled;  // the backend is asked without the lock
  for (const auto& [id, handle] : watched) {
    std::optional<ExitInfo> exit = backend_.PollAttempt(handle);
    polled.push_back({id, handle, exit, backend_.Note(handle)});
  }
  std::vector<std::pair<std::string, AttemptLaunch>> to_start;
  {
    std::lock_guard lock(mutex_);
    ApplyPolls(polled);
    EnforcePreemptionDeadlines();
    if (!stopping_) {
      for (const std::string& id : AdmitQueued()) to_start.emplace_back(id, LaunchFor(live_[id]));
    }
  }
  for (auto& [id, launch] : to_start) {
    Result<AttemptHandle> handle = StartAttempt(launch);
    std::lock_guard lock(mutex_);
    Started(id, handle);
  }
  Flush();
  ++passes_;
}

Result<AttemptHandle> JobManager::StartAttempt(AttemptLaunch& launch) {
  if (accounts_) {
    ASSIGN_OR_RETURN(launch.run_as, accounts_(launch.spec));
  }
  return backend_.StartAttempt(launch);
}

void JobManager::SchedulerLoop() {
  while (true) {
    Step();
    std::unique_lock lock(mutex_);
    // Woken by every change and every AM exit; the tick is for backends that must be
    // polled (Slurm's cache) and for AMs the watcher cannot see (an earlier server's).
    clock_.WaitFor(changed_, lock, 100, [this] { return wake_ || stopping_; });
    wake_ = false;
    if (stopping_) return;
  }
}

}  // namespace shoal
