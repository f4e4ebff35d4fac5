#include "master/application_master.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <set>
#include <thread>

#include "common/backoff.h"
#include "common/files.h"
#include "common/http_server.h"
#include "common/inherited_environment.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/secret.h"
#include "common/units.h"
#include "data/checkpoints.h"
#include "master/cluster_polls.h"
#include "master/mpi_launch.h"
#include "protocol/attempt_messages.h"
#include "protocol/task_messages.h"
#include "runtime/framework.h"
#include "runtime/launch_plan.h"

namespace shoal {
namespace {

using protocol::TaskId;

Status MpiTokenMissing() {
  return PermissionDenied(std::string("MPI launch requests must carry the attempt's MPI token (") + kMpiTokenVariable +
                          "); only the mpirun this AM started has it");
}

}  // namespace

ApplicationMaster::ApplicationMaster(AmOptions options, ContainerLauncher& launcher, const Clock& clock,
                                     ProcessLauncher& processes)
    : options_(std::move(options)),
      launcher_(launcher),
      clock_(clock),
      processes_(processes),
      server_(options_.server_url, 5000) {
  // The attempt's token is this AM's one credential; nothing it starts inherits it.
  attempt_token_ = options_.attempt_token;
  server_.set_bearer_token(attempt_token_);
}

bool ApplicationMaster::FollowServer() {
  if (options_.server_info_path.empty()) return false;
  auto text = ReadFile(options_.server_info_path);
  if (!text.ok()) return false;
  Json info = Json::parse(*text, nullptr, false);
  if (!info.is_object() || !info.contains("url") || !info["url"].is_string()) return false;
  std::string url = info["url"].get<std::string>();
  if (url == server_.base_url() || !url.starts_with("http://")) return false;
  LogInfo("the server now listens at " + url + " (was " + server_.base_url() + "); reporting there");
  HttpJsonClient moved(url, 5000);
  moved.set_bearer_token(attempt_token_);
  server_ = moved;
  return true;
}

ApplicationMaster::~ApplicationMaster() {
  Close();
  if (listener_.joinable()) listener_.join();
}

void ApplicationMaster::Close() {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
    PublishClusterSettled();
  }
  changed_.notify_all();
  if (http_) http_->stop();
}

void ApplicationMaster::Abandon() {
  LogInfo("abandoned: stopping at once, as if killed");
  Close();
}

void ApplicationMaster::RequestKill(const std::string& reason) { RequestEnd(reason, false); }

void ApplicationMaster::RequestFail(const std::string& reason) { RequestEnd(reason, true); }

void ApplicationMaster::RequestPreempt(const std::string& reason) {
  {
    std::lock_guard lock(mutex_);
    if (!tracker_) {
      kill_reason_ = kill_requested_ ? kill_reason_ : "preempted before any task started: " + reason;
      kill_fails_ = true;
      kill_requested_ = true;
    } else if (!kill_requested_ && !tracker_->PreemptNoticeNow()) {
      LogInfo("preempted: " + reason + "; the programs have " + FormatDuration(spec_.preemption_grace_ms) + " to checkpoint");
      tracker_->Preempt({reason, spec_.preemption_grace_ms});
    }
  }
  changed_.notify_all();
}

void ApplicationMaster::RequestEnd(const std::string& reason, bool fails) {
  {
    std::lock_guard lock(mutex_);
    if (kill_requested_) return;  // the first request says why
    kill_reason_ = reason;
    kill_fails_ = fails;
    kill_requested_ = true;
  }
  changed_.notify_all();
}

Status ApplicationMaster::FetchAttempt() {
  auto fetched = server_.Get(protocol::AttemptPath(options_.job_id, options_.attempt));
  if (!fetched.ok() && fetched.status().code() == StatusCode::kUnavailable && FollowServer()) {
    fetched = server_.Get(protocol::AttemptPath(options_.job_id, options_.attempt));
  }
  if (!fetched.ok()) return fetched.status();
  ASSIGN_OR_RETURN(protocol::AttemptFetchReply attempt, protocol::Decode<protocol::AttemptFetchReply>(*fetched));
  spec_ = std::move(attempt.spec);
  task_gpus_ = std::move(attempt.task_gpus);
  tracker_ = std::make_unique<AttemptTracker>(spec_, options_.job_id, options_.attempt, task_gpus_, clock_);
  if (FindFramework(spec_.framework)->LaunchesWithMpirun()) tracker_->HoldSuccess();
  return Status::Ok();
}

Result<Json> ApplicationMaster::HandleCluster(const httplib::Request& req) {
  // A poll that waited parked in the gate (master/cluster_polls.h) comes without wait_ms: it waits no more.
  std::string wait_ms = req.has_param("wait_ms") ? req.get_param_value("wait_ms") : "0";
  ASSIGN_OR_RETURN(protocol::WaitQuery query,
                   protocol::DecodeWaitQuery(req.get_param_value("role"), req.get_param_value("index"), wait_ms));
  std::shared_ptr<const ClusterView> cluster;
  int rank = 0;
  {
    std::unique_lock lock(mutex_);
    RETURN_IF_ERROR(CheckTaskToken(req, query.task));
    clock_.WaitFor(changed_, lock, query.wait_ms, [&] { return closing_ || tracker_->AllRegistered() || IsFinal(tracker_->state()); });
    if (IsFinal(tracker_->state())) return Aborted("the attempt has ended (" + tracker_->message() + ")");
    if (!tracker_->AllRegistered()) return protocol::Encode(protocol::ClusterReply{});
    rank = tracker_->Find(query.task.role, query.task.index)->rank;
    cluster = ClusterNow();
  }
  // The plan is made outside the lock: heartbeats go on while thousands of tasks ask.
  const TaskEndpoint& self = cluster->tasks[static_cast<size_t>(rank)];
  LaunchContext context{options_.heartbeat_interval_ms, RunsBoard(query.task.role, query.task.index),
                        data_plan_->InputsFor(query.task.role, query.task.index),
                        data_plan_->OutputsFor(query.task.role, query.task.index), resume_round_};
  return protocol::Encode(
      protocol::ClusterReply{true, PlanLaunch(spec_, *FindFramework(spec_.framework), *cluster, self, context)});
}

std::shared_ptr<const ClusterView> ApplicationMaster::ClusterNow() {
  if (!cluster_ || cluster_registrations_ != tracker_->registrations()) {
    auto cluster = std::make_shared<ClusterView>(tracker_->Cluster(am_addr_));
    cluster->services = services_;
    cluster_ = std::move(cluster);
    cluster_registrations_ = tracker_->registrations();
  }
  return cluster_;
}

void ApplicationMaster::InstallRoutes() {
  using namespace protocol;
  // Decodes the body as a message M, checks the token of the task it names, and runs
  // action(message) under the mutex.
  auto with_task = [this]<typename M>(std::type_identity<M>, auto action) {
    return RouteJson([this, action](const httplib::Request& req) -> Result<Json> {
      ASSIGN_OR_RETURN(Json body, ParseBody(req));
      ASSIGN_OR_RETURN(M message, Decode<M>(body));
      Result<Json> result = [&]() -> Result<Json> {
        std::lock_guard lock(mutex_);
        RETURN_IF_ERROR(CheckTaskToken(req, message.task));
        Result<Json> done = action(message);
        PublishClusterSettled();
        return done;
      }();
      changed_.notify_all();
      return result;
    });
  };
  http_->Post(kRegisterPath, with_task(std::type_identity<RegisterRequest>{}, [this](const RegisterRequest& m) -> Result<Json> {
    RETURN_IF_ERROR(tracker_->Register(m.task.role, m.task.index, m.host, m.ports, m.gpus));
    return Json::object();
  }));
  http_->Post(kStartedPath, with_task(std::type_identity<StartedRequest>{}, [this](const StartedRequest& m) -> Result<Json> {
    RETURN_IF_ERROR(tracker_->Started(m.task.role, m.task.index, m.pid, m.board_url));
    return Json::object();
  }));
  http_->Post(kHeartbeatPath, with_task(std::type_identity<HeartbeatRequest>{}, [this](const HeartbeatRequest& m) -> Result<Json> {
    ASSIGN_OR_RETURN(bool keep_running, tracker_->Heartbeat(m.task.role, m.task.index, m));
    HeartbeatReply reply;
    reply.keep_running = keep_running;
    reply.dump_stacks = stack_requests_.PendingFor(tracker_->Find(m.task.role, m.task.index)->rank);
    saves_->TaskReports(m.task.role, m.task.index, m.saved_models);
    reply.save_models = saves_->ForTask(m.task.role, m.task.index);
    reply.preempt = tracker_->PreemptNoticeNow();
    return Encode(reply);
  }));
  http_->Post(kStacksPath, with_task(std::type_identity<StacksAnswer>{}, [this](const StacksAnswer& m) -> Result<Json> {
    stack_requests_.Answer(tracker_->Find(m.task.role, m.task.index)->rank, m.id, m.text);
    return Json::object();
  }));
  http_->Post(kStackRequestPath, RouteJson([this](const httplib::Request& req) -> Result<Json> {
    // only the server asks: it proves itself with this attempt's token
    if (attempt_token_.empty() || !SecretEquals(req.get_header_value("Authorization"), "Bearer " + attempt_token_)) {
      return PermissionDenied("only the Shoal server may ask this AM for stacks");
    }
    return HandleStackRequest();
  }));
  http_->Post(kExitedPath, with_task(std::type_identity<ExitRequest>{}, [this](const ExitRequest& m) -> Result<Json> {
    RETURN_IF_ERROR(tracker_->Exited(m.task.role, m.task.index, m.exit, m.message, m.terminated));
    saves_->TaskEnded(m.task.role, m.task.index);
    return Json::object();
  }));
  http_->Get(kClusterPath, RouteJson([this](const httplib::Request& req) { return HandleCluster(req); }));
  http_->Post(kMpiLaunchPath, RouteJson([this](const httplib::Request& req) -> Result<Json> {
    if (!tokens_.AllowsMpi(req.get_header_value("Authorization"))) return MpiTokenMissing();
    ASSIGN_OR_RETURN(Json body, ParseBody(req));
    ASSIGN_OR_RETURN(MpiLaunchRequest launch, Decode<MpiLaunchRequest>(body));
    std::optional<int> rank = RankFromMpiHost(launch.host);
    std::lock_guard lock(mutex_);
    if (!rank || *rank >= static_cast<int>(tracker_->tasks().size())) {
      return NotFound("mpirun asked for host '" + launch.host + "', which is not a task of this job");
    }
    mpi_orted_[*rank] = ForegroundOrted(launch.command);
    changed_.notify_all();
    return Json::object();
  }));
  http_->Get(kMpiCommandPath, RouteJson([this](const httplib::Request& req) { return HandleMpiCommand(req); }));
  http_->Get(kMpiWaitPath, RouteJson([this](const httplib::Request& req) { return HandleMpiWait(req); }));
}

Status ApplicationMaster::CheckTaskToken(const httplib::Request& req, const TaskId& id) const {
  const TaskStatus* task = tracker_->Find(id.role, id.index);
  if (!task) return NotFound("this attempt has no task " + id.Name());
  if (tokens_.AllowsTask(task->rank, req.get_header_value("Authorization"))) return Status::Ok();
  return PermissionDenied("a message for task " + task->Name() + " of " + options_.job_id + " attempt " +
                          std::to_string(options_.attempt) + " must carry that task's token (" + kTaskTokenVariable +
                          ", given to its container agent)");
}

Result<Json> ApplicationMaster::HandleStackRequest() {
  std::unique_lock lock(mutex_);
  std::set<int> running;
  for (const auto& task : tracker_->tasks()) {
    if (task.state == TaskState::kRunning) running.insert(task.rank);
  }
  if (running.empty()) return FailedPrecondition("no task of this attempt is running: there are no stacks to take");
  int64_t id = stack_requests_.Begin(running);
  // Each task answers after its next heartbeat; gdb takes about a second per process.
  clock_.WaitFor(changed_, lock, 45'000, [&] { return closing_ || stack_requests_.Complete(id); });
  protocol::StackReply reply;
  for (int rank : running) {
    const TaskStatus& task = tracker_->tasks()[rank];
    auto answer = stack_requests_.Answers().find(rank);
    bool answered = answer != stack_requests_.Answers().end();
    reply.tasks.push_back({task.Name(), task.host, answered, answered ? answer->second : "the task did not answer in time"});
  }
  return protocol::Encode(reply);
}

Result<Json> ApplicationMaster::HandleMpiCommand(const httplib::Request& req) {
  ASSIGN_OR_RETURN(protocol::WaitQuery query, protocol::DecodeWaitQuery(req.get_param_value("role"), req.get_param_value("index"),
                                                                         req.get_param_value("wait_ms")));
  std::unique_lock lock(mutex_);
  RETURN_IF_ERROR(CheckTaskToken(req, query.task));
  int rank = tracker_->Find(query.task.role, query.task.index)->rank;
  clock_.WaitFor(changed_, lock, query.wait_ms, [&] { return closing_ || mpi_orted_.count(rank) || IsFinal(tracker_->state()); });
  if (IsFinal(tracker_->state())) return Aborted("the attempt has ended (" + tracker_->message() + ")");
  if (!mpi_orted_.count(rank)) return protocol::Encode(protocol::MpiCommandReply{});
  return protocol::Encode(protocol::MpiCommandReply{true, mpi_orted_[rank]});
}

Result<Json> ApplicationMaster::HandleMpiWait(const httplib::Request& req) {
  if (!tokens_.AllowsMpi(req.get_header_value("Authorization"))) return MpiTokenMissing();
  std::optional<int> rank = RankFromMpiHost(req.get_param_value("host"));
  int wait_ms = std::clamp(std::atoi(req.get_param_value("wait_ms").c_str()), 0, 30'000);  // atoi: 0 on junk
  std::unique_lock lock(mutex_);
  if (!rank || *rank >= static_cast<int>(tracker_->tasks().size())) return NotFound("no such MPI host");
  auto ended = [&] { return IsFinal(tracker_->tasks()[*rank].state); };
  clock_.WaitFor(changed_, lock, wait_ms, [&] { return closing_ || ended(); });
  const TaskStatus& task = tracker_->tasks()[*rank];
  int exit_code = task.state == TaskState::kSucceeded ? 0 : std::clamp(task.exit_code, 1, 255);
  return protocol::Encode(protocol::MpiWaitReply{ended(), exit_code});
}

void ApplicationMaster::DriveMpirun() {
  if (!FindFramework(spec_.framework)->LaunchesWithMpirun()) return;
  if (mpirun_pid_ == 0 && !IsFinal(tracker_->state()) && tracker_->AllRegistered()) {
    std::string hostfile = options_.attempt_dir + "/mpi-hosts";
    auto env = InheritedEnvironment(CurrentEnvironment());
    env["SHOAL_AM_ADDR"] = am_addr_;
    env[kMpiTokenVariable] = tokens_.ForMpi();
    env["OMPI_ALLOW_RUN_AS_ROOT"] = "1";
    env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1";
    int log = open((options_.attempt_dir + "/mpirun.log").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    Status written = WriteFileAtomic(hostfile, MpiHostfile(spec_));
    auto pid = written.ok() ? processes_.Spawn({.argv = MpirunArgv(spec_, hostfile, options_.shoal_executable),
                                               .env = env,
                                               .cwd = spec_.workdir,
                                               .new_process_group = true,
                                               .stdout_fd = log,
                                               .stderr_fd = log})
                            : Result<pid_t>(written);
    if (log >= 0) close(log);
    if (!pid.ok()) {
      tracker_->Fail("cannot start mpirun: " + pid.status().message());
      mpirun_ended_ = true;
      mpirun_pid_ = -1;
      return;
    }
    mpirun_pid_ = *pid;
    LogInfo("mpirun started (pid " + std::to_string(*pid) + "); its own lines are in mpirun.log, each rank's output in its task's log");
  }
  if (mpirun_pid_ <= 0 || mpirun_ended_) return;
  if (auto exit = processes_.TryWait(mpirun_pid_)) {
    mpirun_ended_ = true;
    if (!exit->success()) {
      std::string log_path = options_.attempt_dir + "/mpirun.log";
      std::string verdict = "mpirun ended with " + exit->Describe() + "; see " + log_path;
      auto log = ReadFileTail(log_path, 256 * 1024);
      auto failed = log.ok() ? FailedRankFromMpirunOutput(*log, spec_) : std::nullopt;
      if (failed) {
        tracker_->FailTask(failed->task_rank, failed->exit, failed->description + " (" + verdict + ")");
      } else {
        tracker_->Fail(verdict);
      }
    } else {
      tracker_->ReleaseSuccess();
    }
  } else if (IsFinal(tracker_->state())) {
    processes_.SignalGroup(mpirun_pid_, SIGTERM);  // the attempt is over: so is mpirun
  }
}

Status ApplicationMaster::StartServer() {
  // The agents' cluster polls wait parked in the gate; an MPI job's long polls (the
  // orted command, mpi-agent's wait) still hold a worker each.
  constexpr size_t kWorkers = 16;
  size_t workers = FindFramework(spec_.framework)->LaunchesWithMpirun() ? static_cast<size_t>(spec_.TotalTasks()) + 8 : kWorkers;
  // Each agent keeps one connection open for its heartbeats, and on the local cluster
  // every agent comes from 127.0.0.1: one address may hold what the whole gate holds.
  GateLimits limits;
  limits.max_per_peer = limits.max_connections;
  http_ = std::make_unique<GatedHttpServer>(workers, FitToOpenFileLimit(limits));
  http_->set_parking_rule(ParkClusterPolls([this] { return cluster_settled_.load(); }));
  InstallRoutes();
  ASSIGN_OR_RETURN(int port, BindServer(*http_, options_.bind_host, 0));
  am_addr_ = options_.bind_host + ":" + std::to_string(port);
  listener_ = ServeInBackground(*http_);
  return Status::Ok();
}

bool ApplicationMaster::RunsBoard(const std::string& role, int index) const {
  return !spec_.board.command.empty() && spec_.board.role == role && spec_.board.index == index;
}

Status ApplicationMaster::StartFrameworkServices() {
  if (FindFramework(spec_.framework)->NeedsRabitTracker()) {
    const RoleSpec* workers = spec_.FindRole("worker");
    rabit_tracker_ = std::make_unique<RabitTracker>(workers ? workers->instances : spec_.TotalTasks());
    ASSIGN_OR_RETURN(int port, rabit_tracker_->Start(options_.bind_host));
    services_[kRabitTrackerService] = options_.bind_host + ":" + std::to_string(port);
    LogInfo("serving the Rabit tracker at " + services_[kRabitTrackerService]);
  }
  return Status::Ok();
}

void ApplicationMaster::PublishClusterSettled() {
  bool settled = closing_ || (tracker_ && (tracker_->AllRegistered() || IsFinal(tracker_->state())));
  if (settled && !cluster_settled_.exchange(true) && http_) http_->WakeParked();
}

void ApplicationMaster::Wake() {
  {
    std::lock_guard lock(mutex_);
    wake_ = true;
  }
  changed_.notify_all();
}

void ApplicationMaster::LaunchContainers() {
  // Agents inherit the allowlist only (a Slurm step adds its own SLURM_* variables).
  auto env = InheritedEnvironment(CurrentEnvironment());
  // The attempt's markers: the backend's sweep (CleanUpAttempt) finds every process by them.
  for (const char* marker : {"SHOAL_JOB_ID", "SHOAL_ATTEMPT", "SHOAL_ATTEMPT_DIR"}) {
    if (const char* value = std::getenv(marker)) env[marker] = value;
  }
  std::vector<ContainerLaunch> launches;
  std::vector<int> ranks;
  for (const TaskStatus& task : std::vector<TaskStatus>(tracker_->tasks())) {
    std::string base = options_.attempt_dir + "/" + task.role + "-" + std::to_string(task.index);
    ContainerLaunch launch{options_.job_id,
                           options_.attempt,
                           task.role,
                           task.index,
                           {options_.shoal_executable, "container", "--am", am_addr_, "--job", options_.job_id,
                            "--attempt", std::to_string(options_.attempt), "--role", task.role, "--index",
                            std::to_string(task.index), "--log", base + ".log", "--task-dir", base, "--ports",
                            RunsBoard(task.role, task.index) ? "2" : "1", "--register-timeout-ms",
                            std::to_string(spec_.timeouts.register_ms)},
                           env,
                           options_.attempt_dir,
                           base + ".agent.log",
                           spec_.FindRole(task.role)->resources};
    launch.env[kTaskTokenVariable] = tokens_.ForTask(task.rank);
    launches.push_back(std::move(launch));
    ranks.push_back(task.rank);
  }
  std::vector<Result<std::string>> ids = launcher_.LaunchAll(launches);
  std::lock_guard lock(mutex_);
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ids[i].ok()) tracker_->Launched(ranks[i], *ids[i]);
    else tracker_->LaunchFailed(ranks[i], ids[i].status().message());
  }
}

Status ApplicationMaster::PrepareCheckpoints() {
  bool checkpoints = std::any_of(spec_.roles.begin(), spec_.roles.end(),
                                 [&](const RoleSpec& role) { return spec_.CheckpointOf(role) != nullptr; });
  if (!checkpoints || options_.attempt <= 1) return Status::Ok();
  Result<int> round = data::PrepareResume(spec_, options_.job_id);
  if (!round.ok()) return round.status().WithContext("cannot choose the checkpoint to resume from");
  resume_round_ = *round;
  LogInfo(resume_round_ > 0 ? "attempt " + std::to_string(options_.attempt) + " resumes from checkpoint round " +
                                  std::to_string(resume_round_)
                            : "no checkpoint complete for every task yet: attempt " + std::to_string(options_.attempt) +
                                  " starts from the beginning");
  return Status::Ok();
}

void ApplicationMaster::Report(bool final_report) {
  protocol::AttemptReport report;
  {
    std::lock_guard lock(mutex_);
    report = tracker_->Snapshot();
    reported_state_ = tracker_->state();
    for (TaskSeries& entry : tracker_->TakeSeries()) unreported_series_.push_back(std::move(entry));
    report.saved_models = saves_->Updates();
  }
  // While the server is unreachable, keep the newest points only.
  constexpr size_t kMaxUnreported = 2'000;
  if (unreported_series_.size() > kMaxUnreported) {
    unreported_series_.erase(unreported_series_.begin(),
                             unreported_series_.begin() + static_cast<long>(unreported_series_.size() - kMaxUnreported));
  }
  last_report_ms_ = clock_.NowMillis();
  report.series = unreported_series_;
  report.am_addr = am_addr_;
  report.final = final_report;
  Json body = protocol::Encode(report);
  // A final report waits out a server restart (up to 2 minutes); others are dropped
  // when the server is away, and the next change sends a newer one.
  int64_t give_up = clock_.NowMillis() + (final_report ? 120'000 : 0);
  Backoff backoff(clock_, 200, 5'000);
  while (true) {
    auto reply = server_.Post(protocol::ReportPath(options_.job_id, options_.attempt), body);
    if (reply.ok()) {
      reported_version_ = report.version;
      auto decoded = protocol::Decode<protocol::ReportReply>(*reply);
      std::vector<std::string> save_requests;
      if (decoded.ok()) {
        for (const auto& request : decoded->save_requests) save_requests.push_back(request.name);
      } else {
        LogError("the server's reply to a report: " + decoded.status().message());
      }
      if (!save_requests.empty()) {
        std::lock_guard lock(mutex_);
        saves_->Request(save_requests);
      }
      if (decoded.ok() && decoded->preempt) {
        std::lock_guard lock(mutex_);
        if (!tracker_->PreemptNoticeNow()) {
          LogInfo("preempted: " + decoded->preempt->reason + "; the programs have " +
                  FormatDuration(decoded->preempt->grace_ms) + " to checkpoint");
          tracker_->Preempt(*decoded->preempt);
        }
      }
      if (!decoded.ok() || decoded->series_stored) unreported_series_.clear();
      return;
    }
    if (reply.status().code() == StatusCode::kUnavailable && FollowServer()) continue;
    if (clock_.NowMillis() >= give_up) {
      LogError("cannot report to the server: " + reply.status().ToString());
      return;
    }
    if (backoff.attempts() == 0) LogError("reporting to the server: " + reply.status().message() + "; retrying");
    backoff.Wait();
  }
}

void ApplicationMaster::Loop() {
  bool kill_applied = false;
  while (true) {
    bool done, series_due, report_due;
    int64_t version;
    {
      std::unique_lock lock(mutex_);
      if (closing_) return;  // abandoned: nothing more is stopped or reported
      if (kill_requested_ && !kill_applied) {
        kill_fails_ ? tracker_->Fail(kill_reason_) : tracker_->Kill(kill_reason_);
        kill_applied = true;
      }
      for (const auto& [container_id, exit] : launcher_.Poll()) tracker_->ContainerEnded(container_id, exit);
      tracker_->Tick();
      PublishClusterSettled();
      DriveMpirun();
      for (int rank : tracker_->TasksToStop()) launcher_.Stop(tracker_->tasks()[rank].container_id, options_.stop_grace_ms);
      done = tracker_->Done() && (mpirun_pid_ <= 0 || mpirun_ended_);
      version = tracker_->version();
      // Samples and metrics alone are reported about once a second.
      series_due = tracker_->HasSeries() && clock_.NowMillis() - last_report_ms_ >= 1000;
      report_due = version != reported_version_ && ReportMayGo();
    }
    changed_.notify_all();
    if (report_due || done || series_due) Report(done);
    if (done) return;
    std::unique_lock lock(mutex_);
    // Woken by every agent message and every agent's exit; the tick drives the timeouts.
    clock_.WaitFor(changed_, lock, 100, [&] {
      return closing_ || wake_ || (tracker_->version() != version && ReportMayGo()) || (kill_requested_ && !kill_applied);
    });
    wake_ = false;
  }
}

bool ApplicationMaster::ReportMayGo() const {
  // A report carries every task: for a big job, progress and samples go at most every
  // tasks/10 ms (1 s from 10,000 tasks); a change of the attempt's state goes at once.
  int64_t spacing = std::min<int64_t>(1000, spec_.TotalTasks() / 10);
  return tracker_->state() != reported_state_ || clock_.NowMillis() - last_report_ms_ >= spacing;
}

int ApplicationMaster::Run() {
  if (Status s = FetchAttempt(); !s.ok()) {
    LogError("cannot fetch the attempt from the server: " + s.ToString());
    return 2;
  }
  auto tokens = TaskTokens::Make(spec_.TotalTasks());
  if (!tokens.ok()) {
    LogError(tokens.status().ToString());
    return 1;
  }
  tokens_ = std::move(tokens).value();
  // The inputs are split once per attempt; when that fails (the data went away since the
  // submit), the attempt fails with the reason and no container starts.
  Result<data::DataPlan> plan = data::DataPlan::Make(spec_);
  data_plan_ = plan.ok() ? std::move(plan).value() : data::DataPlan();
  saves_ = std::make_unique<data::SaveTracker>(data_plan_->OutputTasks());
  Status resumable = PrepareCheckpoints();
  if (Status s = StartServer(); !s.ok()) {
    LogError(s.ToString());
    return 1;
  }
  if (Status s = StartFrameworkServices(); !s.ok()) {
    LogError(s.ToString());
    return 1;
  }
  LogInfo("attempt " + std::to_string(options_.attempt) + " of " + options_.job_id + ": serving containers at " + am_addr_);
  launcher_.SetChangeCallback([this] { Wake(); });
  Report(false);
  if (!plan.ok()) {
    LogError("cannot split the job's inputs: " + plan.status().ToString());
    std::lock_guard lock(mutex_);
    tracker_->Fail("before any task started: " + plan.status().message());
  } else if (!resumable.ok()) {
    LogError(resumable.ToString());
    std::lock_guard lock(mutex_);
    tracker_->Fail("before any task started: " + resumable.message());
  } else {
    LaunchContainers();
  }
  Loop();
  if (rabit_tracker_) rabit_tracker_->Stop();
  if (closing_) return 137;
  std::lock_guard lock(mutex_);
  LogInfo("attempt ended " + std::string(Name(tracker_->state())) + ": " + tracker_->message());
  return tracker_->state() == AttemptState::kSucceeded ? 0 : 1;
}

}  // namespace shoal
