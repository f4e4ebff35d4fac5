#include "master/application_master.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <set>
#include <thread>

#include "common/files.h"
#include "common/secret.h"
#include "common/http_server.h"
#include "common/log.h"
#include "master/am_messages.h"
#include "master/am_protocol.h"
#include "master/mpi_launch.h"
#include "runtime/framework.h"

namespace shoal {
namespace {

std::string AttemptPath(const AmOptions& o) {
  return "/internal/v1/jobs/" + o.job_id + "/attempts/" + std::to_string(o.attempt);
}

Status MpiTokenMissing() {
  return PermissionDenied(std::string("MPI launch requests must carry the attempt's MPI token (") + kMpiTokenVariable +
                          "); only the mpirun this AM started has it");
}

}  // namespace

ApplicationMaster::ApplicationMaster(AmOptions options, ContainerLauncher& launcher, const Clock& clock)
    : options_(std::move(options)), launcher_(launcher), clock_(clock), server_(options_.server_url, 5000) {
  // A server beyond loopback gives its AMs its token.
  if (const char* token = std::getenv("SHOAL_SERVER_TOKEN"); token && *token) {
    server_token_ = token;
    server_.set_bearer_token(token);
  }
}

ApplicationMaster::~ApplicationMaster() { http_.stop(); }

void ApplicationMaster::RequestKill(const std::string& reason) {
  {
    std::lock_guard lock(mutex_);
    kill_reason_ = reason;
  }
  kill_requested_ = true;
  changed_.notify_all();
}

Status ApplicationMaster::FetchAttempt() {
  ASSIGN_OR_RETURN(Json attempt, server_.Get(AttemptPath(options_)));
  spec_ = JobSpecFromJson(attempt.at("spec"));
  task_gpus_ = attempt.value("task_gpus", std::vector<std::vector<int>>{});
  tracker_ = std::make_unique<AttemptTracker>(spec_, options_.job_id, options_.attempt, task_gpus_, clock_);
  if (FindFramework(spec_.framework)->LaunchesWithMpirun()) tracker_->HoldSuccess();
  return Status::Ok();
}

Result<Json> ApplicationMaster::HandleCluster(const httplib::Request& req) {
  TaskRef ref{req.get_param_value("role"), std::atoi(req.get_param_value("index").c_str())};
  int wait_ms = std::clamp(std::atoi(req.get_param_value("wait_ms").c_str()), 0, 30'000);
  std::unique_lock lock(mutex_);
  RETURN_IF_ERROR(CheckTaskToken(req, ref.role, ref.index));
  changed_.wait_for(lock, std::chrono::milliseconds(wait_ms),
                    [&] { return tracker_->AllRegistered() || IsFinal(tracker_->state()); });
  if (IsFinal(tracker_->state())) return Aborted("the attempt has ended (" + tracker_->message() + ")");
  if (!tracker_->AllRegistered()) return Json{{"ready", false}};
  ClusterView cluster = tracker_->Cluster(am_addr_);
  cluster.services = services_;
  const TaskEndpoint* self = cluster.Find(ref.role, ref.index);
  const RoleSpec* role = spec_.FindRole(ref.role);
  EnvMap env = spec_.env;
  for (const auto& [k, v] : role->env) env[k] = v;
  for (const auto& [k, v] : FindFramework(spec_.framework)->TaskEnvironment(spec_, cluster, *self)) env[k] = v;
  Json reply{{"ready", true},
             {"env", env},
             {"command", role->command},
             {"workdir", spec_.workdir},
             {"heartbeat_ms", options_.heartbeat_interval_ms}};
  if (RunsBoard(ref.role, ref.index)) reply["board_command"] = spec_.board.command;
  if (FindFramework(spec_.framework)->LaunchesWithMpirun()) reply["mpi"] = true;
  Json processes = Json::array();
  for (int local = 0; local < self->processes; ++local) {
    processes.push_back(FindFramework(spec_.framework)->ProcessEnvironment(cluster, *self, local));
  }
  reply["processes"] = processes;
  Json spec_json = ToJson(spec_);
  reply["files"] = spec_json["files"];
  reply["archives"] = spec_json["archives"];
  reply["inputs"] = data_plan_->InputsFor(ref.role, ref.index);
  reply["outputs"] = data_plan_->OutputsFor(ref.role, ref.index);
  reply["mask"] = SecretValues(spec_);  // the agent masks them in the task's log
  return reply;
}

void ApplicationMaster::InstallRoutes() {
  using namespace am_protocol;
  auto with_task = [this](auto action) {
    return RouteJson([this, action](const httplib::Request& req) -> Result<Json> {
      ASSIGN_OR_RETURN(Json body, ParseBody(req));
      ASSIGN_OR_RETURN(TaskRef ref, TaskFromBody(body));
      Result<Json> result = [&]() -> Result<Json> {
        std::lock_guard lock(mutex_);
        RETURN_IF_ERROR(CheckTaskToken(req, ref.role, ref.index));
        return action(ref, body);
      }();
      changed_.notify_all();
      return result;
    });
  };
  http_.Post(kRegister, with_task([this](const TaskRef& ref, const Json& body) -> Result<Json> {
    ASSIGN_OR_RETURN(RegisterMessage m, RegisterFromBody(body));
    RETURN_IF_ERROR(tracker_->Register(ref.role, ref.index, m.host, m.ports, m.gpus));
    return Json::object();
  }));
  http_.Post(kStarted, with_task([this](const TaskRef& ref, const Json& body) -> Result<Json> {
    ASSIGN_OR_RETURN(StartedMessage m, StartedFromBody(body));
    RETURN_IF_ERROR(tracker_->Started(ref.role, ref.index, m.pid, m.board_url));
    return Json::object();
  }));
  http_.Post(kHeartbeat, with_task([this](const TaskRef& ref, const Json& body) -> Result<Json> {
    ASSIGN_OR_RETURN(HeartbeatData data, HeartbeatFromBody(body));
    ASSIGN_OR_RETURN(bool keep_running, tracker_->Heartbeat(ref.role, ref.index, data));
    Json reply{{"keep_running", keep_running}};
    if (auto id = stack_requests_.PendingFor(tracker_->Find(ref.role, ref.index)->rank)) reply["dump_stacks"] = *id;
    saves_->TaskReports(ref.role, ref.index, body.value("saved_models", Json::array()));
    if (Json names = saves_->ForTask(ref.role, ref.index); !names.empty()) reply["save_models"] = names;
    return reply;
  }));
  http_.Post(kStacks, with_task([this](const TaskRef& ref, const Json& body) -> Result<Json> {
    const TaskStatus* task = tracker_->Find(ref.role, ref.index);
    if (!task) return NotFound("this attempt has no task " + ref.role + "[" + std::to_string(ref.index) + "]");
    stack_requests_.Answer(task->rank, body.value("id", int64_t{0}), body.value("text", ""));
    return Json::object();
  }));
  http_.Post(kStackRequest, RouteJson([this](const httplib::Request& req) -> Result<Json> {
    // only the server asks; a server beyond loopback proves it with its token
    if (!server_token_.empty() && !SecretEquals(req.get_header_value("Authorization"), "Bearer " + server_token_)) {
      return PermissionDenied("only the Shoal server may ask this AM for stacks");
    }
    return HandleStackRequest();
  }));
  http_.Post(kExited, with_task([this](const TaskRef& ref, const Json& body) -> Result<Json> {
    ASSIGN_OR_RETURN(ExitMessage m, ExitFromBody(body));
    RETURN_IF_ERROR(tracker_->Exited(ref.role, ref.index, m.exit, m.message));
    saves_->TaskEnded(ref.role, ref.index);
    return Json::object();
  }));
  http_.Get(kCluster, RouteJson([this](const httplib::Request& req) { return HandleCluster(req); }));
  http_.Post(kMpiLaunch, RouteJson([this](const httplib::Request& req) -> Result<Json> {
    if (!tokens_.AllowsMpi(req.get_header_value("Authorization"))) return MpiTokenMissing();
    ASSIGN_OR_RETURN(Json body, ParseBody(req));
    std::optional<int> rank = RankFromMpiHost(body.value("host", ""));
    std::lock_guard lock(mutex_);
    if (!rank || *rank >= static_cast<int>(tracker_->tasks().size())) {
      return NotFound("mpirun asked for host '" + body.value("host", "") + "', which is not a task of this job");
    }
    mpi_orted_[*rank] = ForegroundOrted(body.value("command", ""));
    changed_.notify_all();
    return Json::object();
  }));
  http_.Get(kMpiCommand, RouteJson([this](const httplib::Request& req) { return HandleMpiCommand(req); }));
  http_.Get(kMpiWait, RouteJson([this](const httplib::Request& req) { return HandleMpiWait(req); }));
}

Status ApplicationMaster::CheckTaskToken(const httplib::Request& req, const std::string& role, int index) const {
  const TaskStatus* task = tracker_->Find(role, index);
  if (!task) return NotFound("this attempt has no task " + role + "[" + std::to_string(index) + "]");
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
  changed_.wait_for(lock, std::chrono::seconds(45), [&] { return stack_requests_.Complete(id); });
  Json tasks = Json::array();
  for (int rank : running) {
    const TaskStatus& task = tracker_->tasks()[rank];
    auto answer = stack_requests_.Answers().find(rank);
    tasks.push_back({{"task", task.Name()},
                     {"host", task.host},
                     {"answered", answer != stack_requests_.Answers().end()},
                     {"text", answer != stack_requests_.Answers().end() ? answer->second : "the task did not answer in time"}});
  }
  return Json{{"tasks", tasks}};
}

Result<Json> ApplicationMaster::HandleMpiCommand(const httplib::Request& req) {
  std::string role = req.get_param_value("role");
  int index = std::atoi(req.get_param_value("index").c_str());
  int wait_ms = std::clamp(std::atoi(req.get_param_value("wait_ms").c_str()), 0, 30'000);
  std::unique_lock lock(mutex_);
  RETURN_IF_ERROR(CheckTaskToken(req, role, index));
  int rank = tracker_->Find(role, index)->rank;
  changed_.wait_for(lock, std::chrono::milliseconds(wait_ms),
                    [&] { return mpi_orted_.count(rank) || IsFinal(tracker_->state()); });
  if (IsFinal(tracker_->state())) return Aborted("the attempt has ended (" + tracker_->message() + ")");
  if (!mpi_orted_.count(rank)) return Json{{"ready", false}};
  return Json{{"ready", true}, {"command", mpi_orted_[rank]}};
}

Result<Json> ApplicationMaster::HandleMpiWait(const httplib::Request& req) {
  if (!tokens_.AllowsMpi(req.get_header_value("Authorization"))) return MpiTokenMissing();
  std::optional<int> rank = RankFromMpiHost(req.get_param_value("host"));
  int wait_ms = std::clamp(std::atoi(req.get_param_value("wait_ms").c_str()), 0, 30'000);
  std::unique_lock lock(mutex_);
  if (!rank || *rank >= static_cast<int>(tracker_->tasks().size())) return NotFound("no such MPI host");
  auto ended = [&] { return IsFinal(tracker_->tasks()[*rank].state); };
  changed_.wait_for(lock, std::chrono::milliseconds(wait_ms), ended);
  const TaskStatus& task = tracker_->tasks()[*rank];
  return Json{{"done", ended()}, {"exit_code", task.state == TaskState::kSucceeded ? 0 : std::max(1, task.exit_code)}};
}

void ApplicationMaster::DriveMpirun() {
  if (!FindFramework(spec_.framework)->LaunchesWithMpirun()) return;
  auto& processes = RealProcessLauncher::Instance();
  if (mpirun_pid_ == 0 && !IsFinal(tracker_->state()) && tracker_->AllRegistered()) {
    std::string hostfile = options_.attempt_dir + "/mpi-hosts";
    auto env = CurrentEnvironment();
    env["SHOAL_AM_ADDR"] = am_addr_;
    env[kMpiTokenVariable] = tokens_.ForMpi();
    env["OMPI_ALLOW_RUN_AS_ROOT"] = "1";
    env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1";
    int log = open((options_.attempt_dir + "/mpirun.log").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    Status written = WriteFileAtomic(hostfile, MpiHostfile(spec_));
    auto pid = written.ok() ? processes.Spawn({.argv = MpirunArgv(spec_, hostfile, options_.shoal_executable),
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
    LogInfo("mpirun started (pid " + std::to_string(*pid) + "); its output is in mpirun.log");
  }
  if (mpirun_pid_ <= 0 || mpirun_ended_) return;
  if (auto exit = processes.TryWait(mpirun_pid_)) {
    mpirun_ended_ = true;
    if (!exit->success()) {
      tracker_->Fail("mpirun ended with " + exit->Describe() + "; see " + options_.attempt_dir + "/mpirun.log");
    } else {
      tracker_->ReleaseSuccess();
    }
  } else if (IsFinal(tracker_->state())) {
    processes.SignalGroup(mpirun_pid_, SIGTERM);  // the attempt is over: so is mpirun
  }
}

Status ApplicationMaster::StartServer() {
  InstallRoutes();
  size_t threads = static_cast<size_t>(spec_.TotalTasks()) + 8;
  http_.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  ASSIGN_OR_RETURN(int port, BindServer(http_, options_.bind_host, 0));
  am_addr_ = options_.bind_host + ":" + std::to_string(port);
  std::thread([this] { http_.listen_after_bind(); }).detach();
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

void ApplicationMaster::LaunchContainers() {
  auto env = CurrentEnvironment();
  for (const TaskStatus& task : std::vector<TaskStatus>(tracker_->tasks())) {
    std::string base = options_.attempt_dir + "/" + task.role + "-" + std::to_string(task.index);
    ContainerLaunch launch{options_.job_id,
                           options_.attempt,
                           task.role,
                           task.index,
                           {options_.shoal_executable, "container", "--am", am_addr_, "--job", options_.job_id,
                            "--attempt", std::to_string(options_.attempt), "--role", task.role, "--index",
                            std::to_string(task.index), "--log", base + ".log", "--task-dir", base, "--ports",
                            RunsBoard(task.role, task.index) ? "2" : "1"},
                           env,
                           options_.attempt_dir,
                           base + ".agent.log",
                           spec_.FindRole(task.role)->resources};
    launch.env[kTaskTokenVariable] = tokens_.ForTask(task.rank);
    auto id = launcher_.Launch(launch);
    std::lock_guard lock(mutex_);
    if (id.ok()) tracker_->Launched(task.rank, *id);
    else tracker_->LaunchFailed(task.rank, id.status().message());
  }
}

void ApplicationMaster::Report(bool final_report) {
  Json body;
  {
    std::lock_guard lock(mutex_);
    body = tracker_->Snapshot();
    for (Json& entry : tracker_->TakeSeries()) unreported_series_.push_back(std::move(entry));
  }
  // While the server is unreachable, keep the newest points only.
  constexpr size_t kMaxUnreported = 2'000;
  if (unreported_series_.size() > kMaxUnreported) {
    unreported_series_.erase(unreported_series_.begin(),
                             unreported_series_.begin() + static_cast<long>(unreported_series_.size() - kMaxUnreported));
  }
  last_report_ms_ = clock_.NowMillis();
  body["series"] = unreported_series_;
  body["am_addr"] = am_addr_;
  body["final"] = final_report;
  {
    std::lock_guard lock(mutex_);
    body["saved_models"] = saves_->Updates();
  }
  int64_t version = body["version"].get<int64_t>();
  int64_t give_up = clock_.NowMillis() + (final_report ? 30'000 : 0);
  while (true) {
    auto reply = server_.Post(AttemptPath(options_) + "/report", body);
    if (reply.ok()) {
      reported_version_ = version;
      std::vector<std::string> save_requests;
      for (const Json& request : reply->value("save_requests", Json::array())) {
        save_requests.push_back(request.value("name", ""));
      }
      if (!save_requests.empty()) {
        std::lock_guard lock(mutex_);
        saves_->Request(save_requests);
      }
      unreported_series_ = Json::array();
      return;
    }
    if (clock_.NowMillis() >= give_up) {
      LogError("cannot report to the server: " + reply.status().ToString());
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

void ApplicationMaster::Loop() {
  bool kill_applied = false;
  while (true) {
    bool done, series_due;
    int64_t version;
    {
      std::unique_lock lock(mutex_);
      if (kill_requested_ && !kill_applied) {
        tracker_->Kill(kill_reason_);
        kill_applied = true;
      }
      for (const auto& [container_id, exit] : launcher_.Poll()) tracker_->ContainerEnded(container_id, exit);
      tracker_->Tick();
      DriveMpirun();
      for (int rank : tracker_->TasksToStop()) launcher_.Stop(tracker_->tasks()[rank].container_id, options_.stop_grace_ms);
      done = tracker_->Done() && (mpirun_pid_ <= 0 || mpirun_ended_);
      version = tracker_->version();
      // Samples and metrics alone are reported about once a second.
      series_due = tracker_->HasSeries() && clock_.NowMillis() - last_report_ms_ >= 1000;
    }
    changed_.notify_all();
    if (version != reported_version_ || done || series_due) Report(done);
    if (done) return;
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, std::chrono::milliseconds(20));
  }
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
  if (Status s = StartServer(); !s.ok()) {
    LogError(s.ToString());
    return 1;
  }
  if (Status s = StartFrameworkServices(); !s.ok()) {
    LogError(s.ToString());
    return 1;
  }
  LogInfo("attempt " + std::to_string(options_.attempt) + " of " + options_.job_id + ": serving containers at " + am_addr_);
  Report(false);
  if (plan.ok()) {
    LaunchContainers();
  } else {
    LogError("cannot split the job's inputs: " + plan.status().ToString());
    std::lock_guard lock(mutex_);
    tracker_->Fail("before any task started: " + plan.status().message());
  }
  Loop();
  if (rabit_tracker_) rabit_tracker_->Stop();
  std::lock_guard lock(mutex_);
  LogInfo("attempt ended " + std::string(Name(tracker_->state())) + ": " + tracker_->message());
  return tracker_->state() == AttemptState::kSucceeded ? 0 : 1;
}

}  // namespace shoal
