#include "container/container_agent.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <mutex>
#include <thread>

#include "common/backoff.h"
#include "common/child_watcher.h"
#include "common/files.h"
#include "common/inherited_environment.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/shell_quote.h"
#include "container/localizer.h"
#include "container/metric_line.h"
#include "container/orphans.h"
#include "container/output_capture.h"
#include "container/port_reservation.h"
#include "container/progress_line.h"
#include "container/resource_sampler.h"
#include "container/shell_command.h"
#include "container/stack_dump.h"
#include "isolation/cgroup_control.h"
#include "isolation/image_store.h"
#include "isolation/task_isolation.h"
#include "protocol/task_messages.h"
#include "storage/storage.h"

namespace shoal {
namespace {

using namespace protocol;

// The GPU numbers in a CUDA_VISIBLE_DEVICES value ("0,2"); names that are not numbers are skipped.
std::vector<int> GpuNumbers(const std::string& visible) {
  std::vector<int> gpus;
  std::string item;
  for (char c : visible + ",") {
    if (c != ',') {
      item += c;
      continue;
    }
    if (!item.empty() && item.size() < 6 && item.find_first_not_of("0123456789") == std::string::npos) {
      gpus.push_back(std::stoi(item));
    }
    item.clear();
  }
  return gpus;
}

}  // namespace

ContainerAgent::ContainerAgent(ContainerOptions options, ProcessLauncher& processes, const Clock& clock)
    : options_(std::move(options)), processes_(processes), clock_(clock), am_("http://" + options_.am_addr, 10'000),
      heartbeats_(am_.base_url(), 10'000) {
  // the task's token proves to the AM which task this is (master/task_tokens.h)
  if (!options_.task_token.empty()) {
    am_.set_bearer_token(options_.task_token);
    heartbeats_.set_bearer_token(options_.task_token);
  }
  heartbeats_.KeepAlive();
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

ContainerAgent::~ContainerAgent() {
  if (wake_fd_ >= 0) close(wake_fd_);
}

void ContainerAgent::WakeSupervisor() {
  uint64_t one = 1;
  if (wake_fd_ >= 0) (void)!write(wake_fd_, &one, sizeof one);
}

void ContainerAgent::WaitForEvent(OutputCapture& capture, const std::vector<int>& exit_fds, int64_t deadline) {
  std::vector<int> wake_on;
  bool every_exit_wakes = true;
  for (int fd : exit_fds) {
    if (fd >= 0) wake_on.push_back(fd);
    else every_exit_wakes = false;
  }
  if (wake_fd_ >= 0) wake_on.push_back(wake_fd_);
  int64_t cap = every_exit_wakes ? options_.max_wait_ms : std::min(options_.max_wait_ms, kPollWithoutPidfdsMs);
  int64_t wait = std::clamp<int64_t>(deadline - clock_.NowMillis(), 0, cap);
  (void)capture.Pump(static_cast<int>(wait), wake_on);
  // RequestStop sets the flag before it writes: only then can there be a wake-up to spend
  // (the flag stays set), so a running task's output costs no extra read per burst.
  uint64_t count;
  if (stop_requested_ && wake_fd_ >= 0) (void)!read(wake_fd_, &count, sizeof count);
}

TaskId ContainerAgent::Task() const { return TaskId{options_.role, options_.index}; }

template <typename Reply>
Result<Reply> ContainerAgent::WaitFor(const char* endpoint) {
  std::string path = std::string(endpoint) + EncodeQuery(WaitQuery{Task(), 5000});
  int64_t give_up = clock_.NowMillis() + options_.register_timeout_ms;
  Backoff backoff(clock_, 100, 2'000);
  while (!stop_requested_) {
    auto reply = am_.Get(path, 15'000);
    if (reply.ok()) {
      ASSIGN_OR_RETURN(Reply decoded, Decode<Reply>(*reply));
      if (decoded.ready) return decoded;
      backoff.Reset();
      continue;
    }
    if (reply.status().code() != StatusCode::kUnavailable && reply.status().code() != StatusCode::kTimeout) {
      return reply.status();
    }
    if (clock_.NowMillis() > give_up) return Timeout(std::string("no answer from the AM's ") + endpoint + " in time");
    if (backoff.attempts() == 0) LogError("waiting for the AM's " + std::string(endpoint) + ": " + reply.status().message());
    backoff.Wait();
  }
  return Aborted("stopped before the program started");
}

int ContainerAgent::Run() {
  // Whatever the programs start and leave behind becomes this agent's child, to be ended
  // with them (container/orphans.h).
  if (!AdoptOrphans()) LogError("cannot become a child subreaper: daemons the program starts may outlive the task");
  PortReservation ports;
  if (Status s = ports.Reserve(options_.ports); !s.ok()) {
    LogError(s.ToString());
    ReportExit({127, 0}, s.message());
    return 0;
  }
  RegisterRequest registration{Task(), options_.host, ports.ports(), std::nullopt, static_cast<int>(getpid())};
  if (options_.gpus_from_env) registration.gpus = GpuNumbers(std::getenv("CUDA_VISIBLE_DEVICES") ? std::getenv("CUDA_VISIBLE_DEVICES") : "");
  int64_t give_up = clock_.NowMillis() + options_.register_timeout_ms;
  Backoff backoff(clock_, 50, 2'000);
  while (true) {
    auto reply = am_.Post(kRegisterPath, Encode(registration));
    if (reply.ok()) break;
    if (reply.status().code() != StatusCode::kUnavailable || clock_.NowMillis() > give_up || stop_requested_) {
      LogError("cannot register with the AM at " + options_.am_addr + ": " + reply.status().ToString());
      return 1;
    }
    if (backoff.attempts() == 0) LogError("registering with the AM: " + reply.status().message() + "; retrying");
    backoff.Wait();
  }

  auto cluster = WaitFor<ClusterReply>(kClusterPath);
  if (!cluster.ok()) {
    LogError("not starting the program: " + cluster.status().ToString());
    return cluster.status().code() == StatusCode::kAborted ? 0 : 1;
  }
  LaunchPlan& plan = cluster->plan;
  // The program's environment: the allowlist, then the plan (runtime/launch_plan.h), then
  // what only this agent knows. No token of Shoal's is in any of them.
  auto env = InheritedEnvironment(CurrentEnvironment());
  for (const auto& [key, value] : plan.env) env[key] = value;
  if (Status s = MakeDirectories(options_.task_dir); !s.ok()) {
    ReportExit({127, 0}, s.message());
    return 0;
  }
  env["SHOAL_TASK_DIR"] = options_.task_dir;
  // The attempt's marker, by which the backend's sweep finds what the program leaves behind.
  if (!options_.attempt_dir_marker.empty()) env["SHOAL_ATTEMPT_DIR"] = options_.attempt_dir_marker;
  if (Status s = Localize(plan.files, plan.archives, options_.task_dir, processes_, env); !s.ok()) {
    LogError(s.ToString());
    ReportExit({127, 0}, "before the program started: " + s.message());
    return 0;
  }
  data_ = std::make_unique<data::TaskData>(plan.inputs, plan.outputs, options_.task_dir,
                                           options_.role + "-" + std::to_string(options_.index));
  if (Status s = data_->Prepare(env); !s.ok()) {
    LogError(s.ToString());
    ReportExit({127, 0}, "before the program started: " + s.message());
    return 0;
  }
  if (Status s = MakeMpiSessionBase(env); !s.ok()) {
    ReportExit({127, 0}, "before the program started: " + s.message());
    return 0;
  }
  preemption_file_ = options_.task_dir + "/.shoal-preempted";
  preemption_grace_ms_ = plan.preemption_grace_ms;
  image_ = plan.image;
  env["SHOAL_PREEMPTION_FILE"] = preemption_file_;
  if (plan.checkpoint) {
    std::string task = options_.role + "-" + std::to_string(options_.index);
    checkpoints_ = std::make_unique<data::TaskCheckpoints>(
        *plan.checkpoint, storage::JoinUri(data::CheckpointRoot(plan.checkpoint->uri, options_.job_id), task),
        options_.task_dir + "/" + plan.checkpoint->path, options_.task_dir + "/.shoal-checkpoints");
    if (Status s = checkpoints_->Restore(plan.resume_round, env); !s.ok()) {
      LogError(s.ToString());
      ReportExit({127, 0}, "before the program started: " + s.message());
      return 0;
    }
  }
  std::string command = plan.command;
  const std::string& workdir = plan.workdir;
  int heartbeat_ms = plan.heartbeat_ms;

  int log_fd = open(options_.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) LogError("cannot open the task log " + options_.log_path);
  WriteCheckpointNotes(log_fd);
  ports.Release();
  std::vector<EnvMap> process_envs = plan.processes;
  if (plan.mpi) {
    // mpirun decides what runs here: an orted, which starts this task's ranks.
    auto orted = WaitFor<MpiCommandReply>(kMpiCommandPath);
    if (!orted.ok()) {
      LogError("no orted to run: " + orted.status().ToString());
      if (log_fd >= 0) close(log_fd);
      return orted.status().code() == StatusCode::kAborted ? 0 : 1;
    }
    command = orted->command;
    process_envs = {EnvMap{}};
  }
  if (auto own = FindOwnCgroups(); own.ok()) {
    CgroupUsage usage = ReadUsage(*own);
    if (usage.memory_limit_bytes > 0) {
      confined_ = *own;
      oom_kills_before_ = CountOomKills(confined_);
    }
  }
  auto programs = StartPrograms(command, workdir, env, process_envs);
  if (programs.ok()) programs->secrets = plan.mask;
  data_->StartFeeding();  // stream inputs: the first local process reads them on stdin
  if (!programs.ok()) {
    if (log_fd >= 0) close(log_fd);
    ReportExit({127, 0}, programs.status().message());
    return 0;
  }
  StartedRequest started{Task(), programs->pids.front(), ""};
  pid_t board = 0;
  if (plan.board_command && ports.ports().size() > 1) {
    board = StartBoard(*plan.board_command, workdir, env, ports.ports()[1], started);
    programs->board = board;
  }
  // Should this agent be killed, its programs (and their children) go with it.
  std::vector<pid_t> groups = programs->pids;
  if (board != 0) groups.push_back(board);
  std::vector<std::string> container_pid_files;
  for (const RuncPaths& container : programs->containers) container_pid_files.push_back(container.pid_file);
  if (auto guard = StartAgentGuard(processes_, groups, env, container_pid_files); guard.ok()) {
    programs->guard = *guard;
  } else {
    LogError("no agent guard: if this agent is killed, its programs may outlive it: " + guard.status().message());
  }
  Backoff start_backoff(clock_, 50, 1'000);
  for (int attempt = 0; attempt < 20; ++attempt) {
    auto reply = am_.Post(kStartedPath, Encode(started), 5000);
    if (reply.ok() || reply.status().code() != StatusCode::kUnavailable) break;
    if (attempt == 0) LogError("reporting the start to the AM: " + reply.status().ToString() + "; retrying");
    start_backoff.Wait();
  }
  std::string visible_gpus = env.count("CUDA_VISIBLE_DEVICES") ? env["CUDA_VISIBLE_DEVICES"] : "";
  std::unique_ptr<ResourceSampler> sampler;
  if (confined_.empty()) {
    sampler = std::make_unique<ProcfsSampler>(clock_, visible_gpus);
  } else {
    sampler = std::make_unique<CgroupSampler>(clock_, visible_gpus, confined_);
  }
  int code = Supervise(*programs, log_fd, heartbeat_ms, *sampler);
  // an MPI task's private Open MPI session folder (MakeMpiSessionBase) goes with the task
  if (!mpi_session_base_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(mpi_session_base_, ignored);
  }
  if (board != 0) {
    processes_.SignalGroup(board, SIGKILL);  // the board lives as long as its task
    processes_.Wait(board);
  }
  if (log_fd >= 0) close(log_fd);
  return code;
}

Status ContainerAgent::MakeMpiSessionBase(std::map<std::string, std::string>& env) {
  auto base = env.find("OMPI_MCA_orte_tmpdir_base");
  if (base == env.end() || base->second != kMpiSessionBasePattern) return Status::Ok();
  auto folder = MakePrivateFolder(kMpiSessionBasePattern, "Open MPI's session");
  if (!folder.ok()) return folder.status();
  mpi_session_base_ = base->second = *folder;
  return Status::Ok();
}

Result<ContainerAgent::Programs> ContainerAgent::StartPrograms(const std::string& command, const std::string& workdir,
                                                              const std::map<std::string, std::string>& env,
                                                              const std::vector<EnvMap>& process_envs) {
  Programs programs;
  bool several = process_envs.size() > 1;
  for (size_t local = 0; local < process_envs.size(); ++local) {
    int out_pipe[2], err_pipe[2];
    if (pipe2(out_pipe, O_CLOEXEC) != 0) return ResourceExhausted("cannot create pipes for the program's output");
    if (pipe2(err_pipe, O_CLOEXEC) != 0) {
      close(out_pipe[0]);
      close(out_pipe[1]);
      return ResourceExhausted("cannot create pipes for the program's output");
    }
    auto process_env = env;
    for (const auto& [key, value] : process_envs[local]) process_env[key] = value;
    auto argv = ProgramArgv(command, workdir, process_env, local, programs);
    if (!argv.ok()) {
      close(out_pipe[0]);
      close(out_pipe[1]);
      close(err_pipe[0]);
      close(err_pipe[1]);
      for (pid_t started : programs.pids) processes_.SignalGroup(started, SIGKILL);
      for (pid_t started : programs.pids) processes_.Wait(started);
      for (const auto& stream : programs.streams) close(stream.fd);
      return argv.status();
    }
    auto pid = processes_.Spawn({.argv = *argv,
                                 .env = process_env,
                                 .cwd = workdir,
                                 .new_process_group = true,
                                 .parent_death_signal = SIGKILL,
                                 .stdin_fd = local == 0 && data_ ? data_->stdin_fd() : -1,
                                 .stdout_fd = out_pipe[1],
                                 .stderr_fd = err_pipe[1]});
    close(out_pipe[1]);
    close(err_pipe[1]);
    // Several processes: every line says whose it is, as torchrun's --tee does.
    std::string prefix = several ? "[" + std::to_string(local) + "] " : "";
    programs.streams.push_back({out_pipe[0], prefix, false});
    programs.streams.push_back({err_pipe[0], prefix, true});
    if (!pid.ok()) {
      for (pid_t started : programs.pids) processes_.SignalGroup(started, SIGKILL);
      for (pid_t started : programs.pids) processes_.Wait(started);
      for (const auto& stream : programs.streams) close(stream.fd);
      return pid.status();
    }
    programs.pids.push_back(*pid);
  }
  return programs;
}

Result<std::vector<std::string>> ContainerAgent::ProgramArgv(const std::string& command, const std::string& workdir,
                                                             const std::map<std::string, std::string>& env, size_t local,
                                                             Programs& programs) {
  std::vector<std::string> shell = {"/bin/sh", "-c", ShellCommand(command)};
  if (!image_) return shell;
  std::string oci = options_.task_dir + "/.shoal-oci";
  RuncPaths paths{.state_root = oci + "/state",
                  .log = oci + "/runc.log",
                  .bundle = oci + "/" + std::to_string(local),
                  .id = ContainerId(confined_.Dir("memory"), options_.task_dir, local),
                  .pid_file = oci + "/" + std::to_string(local) + "/pid"};
  RETURN_IF_ERROR(MakeDirectories(paths.bundle));
  RETURN_IF_ERROR(MakeDirectories(paths.state_root));
  OciBundleSpec bundle{.rootfs = image_->rootfs, .args = shell, .env = env, .cwd = workdir,
                       .host_uid = getuid(), .host_gid = getgid(), .binds = {options_.task_dir}};
  // The job's folder (its programs, when they are not shipped) is mounted too, unless it is
  // the task directory or inside it, or the host's root, which would hide the image.
  if (!workdir.empty() && workdir != "/" && workdir != options_.task_dir &&
      !workdir.starts_with(options_.task_dir + "/") && std::filesystem::is_directory(workdir)) {
    bundle.binds.push_back(workdir);
  }
  // The task directory's folders below the deepest the image has get a tmpfs to be made in.
  if (std::string parent = DeepestFolderInRoot(image_->rootfs, options_.task_dir);
      parent != options_.task_dir && parent != "/" && parent != "/tmp" && !parent.starts_with("/tmp/") &&
      std::filesystem::is_empty(image_->rootfs + parent)) {
    bundle.scratch.push_back(parent);
  }
  if (bundle.cwd.empty()) bundle.cwd = options_.task_dir;
  bundle.env["HOME"] = options_.task_dir;
  auto visible = env.find("CUDA_VISIBLE_DEVICES");
  bundle.devices = GpuDevices(GpuNumbers(visible == env.end() ? "" : visible->second));
  RETURN_IF_ERROR(WriteFileAtomic(paths.bundle + "/config.json", OciConfig(bundle).dump(1)));
  programs.containers.push_back(paths);
  return RuncRunArgv(paths);
}

void ContainerAgent::RemoveContainers(const Programs& programs) {
  for (const RuncPaths& container : programs.containers) {
    auto removed = RunAndCapture(processes_, RuncDeleteArgv(container), 30'000);
    if (!removed.ok() || !removed->exit.success()) {
      LogError("cannot remove container " + container.id + ": " +
               (removed.ok() ? removed->text : removed.status().message()));
    }
  }
}

pid_t ContainerAgent::StartBoard(const std::string& command, const std::string& workdir,
                                 std::map<std::string, std::string> env, int port, StartedRequest& started) {
  env["SHOAL_BOARD_PORT"] = std::to_string(port);
  int board_log = open((options_.task_dir + "/board.log").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  auto spawned = processes_.Spawn({.argv = {"/bin/sh", "-c", command},
                                   .env = env,
                                   .cwd = workdir,
                                   .new_process_group = true,
                                   .parent_death_signal = SIGKILL,
                                   .stdout_fd = board_log,
                                   .stderr_fd = board_log});
  if (board_log >= 0) close(board_log);
  if (!spawned.ok()) {
    LogError("the board did not start: " + spawned.status().message());
    return 0;
  }
  started.board_url = "http://" + options_.host + ":" + std::to_string(port) + "/";
  return *spawned;
}

int ContainerAgent::Supervise(Programs& programs, int log_fd, int heartbeat_ms, ResourceSampler& sampler) {
  double progress = 0;
  bool progress_changed = false;
  std::string last_error_line;
  std::vector<MetricPoint> metrics;  // metric points not yet acknowledged by the AM
  double rtt_ms = -1;
  OutputCapture capture(programs.streams, log_fd, [&](std::string_view line) {
    if (auto value = ParseProgressLine(line)) {
      progress_changed = progress_changed || *value != progress;
      progress = *value;
    } else if (auto metric = ParseMetricLine(line)) {
      for (const auto& [name, value] : metric->values) {
        if (metrics.size() >= kMaxPendingMetrics) metrics.erase(metrics.begin());
        metrics.push_back(MetricPoint{clock_.WallMillis(), metric->step, name, value});
      }
    } else if (line.find_first_not_of(" \t\r") != std::string_view::npos) {
      last_error_line.assign(line.substr(0, 300));
    }
  });
  capture.MaskSecrets(programs.secrets);
  const std::vector<pid_t>& pids = programs.pids;
  std::vector<std::optional<ExitInfo>> exits(pids.size());
  std::optional<ExitInfo> failure;  // the first process that failed decides the task
  size_t failed_local_rank = 0;
  auto signal_all = [&](int sig) {
    for (size_t i = 0; i < pids.size(); ++i) {
      if (!exits[i]) processes_.SignalGroup(pids[i], sig);
    }
  };
  int64_t next_heartbeat = clock_.NowMillis() + heartbeat_ms;
  int64_t next_sample = next_heartbeat;  // samples keep their own pace, whatever triggers a beat
  int64_t last_progress_report = 0;
  int64_t kill_at = 0;
  int64_t am_silent_since = 0;
  int64_t next_checkpoint_poll = 0;
  constexpr int64_t kProgressReportMs = 250;  // progress goes to the AM at most this often between beats
  std::vector<int> exit_fds;  // a pidfd per program (-1 where there is none), to wake at its exit
  for (pid_t pid : pids) exit_fds.push_back(OpenPidfd(pid));
  size_t running = pids.size();
  while (running > 0) {
    int64_t deadline = next_heartbeat;
    if (progress_changed) deadline = std::min(deadline, last_progress_report + kProgressReportMs);
    if (checkpoints_) deadline = std::min(deadline, next_checkpoint_poll);
    if (kill_at > clock_.NowMillis()) deadline = std::min(deadline, kill_at);  // once past, SIGKILL goes every round
    std::vector<int> running_exit_fds;
    for (size_t i = 0; i < pids.size(); ++i) {
      if (!exits[i]) running_exit_fds.push_back(exit_fds[i]);
    }
    WaitForEvent(capture, running_exit_fds, deadline);
    for (size_t i = 0; i < pids.size(); ++i) {
      if (exits[i] || !(exits[i] = processes_.TryWait(pids[i]))) continue;
      --running;
      // Anything it left behind in its group dies with it, unless Shoal is stopping the
      // task: then the group has the rest of the grace (the shell died of SIGTERM, but the
      // program under it is still printing its traceback).
      if (kill_at == 0) processes_.SignalGroup(pids[i], SIGKILL);
      if (!exits[i]->success() && !failure) {
        failure = exits[i];
        failed_local_rank = i;
        stopping_ = true;  // one process failed: the task has failed, stop the others
      }
    }
    if (running == 0) break;
    int64_t now = clock_.NowMillis();
    if (checkpoints_ && now >= next_checkpoint_poll) {
      // A stat of the marker, not on every burst of output.
      next_checkpoint_poll = now + kCheckpointPollMs;
      checkpoints_->Poll();
      WriteCheckpointNotes(log_fd);
    }
    bool progress_due = progress_changed && now - last_progress_report >= kProgressReportMs;
    if (now >= next_heartbeat || progress_due) {
      HeartbeatRequest beat{Task(), progress, std::nullopt, metrics, rtt_ms, false, {}};
      if (data_) beat.saved_models = data_->SaveReports();
      if (now >= next_sample) {
        next_sample = now + heartbeat_ms;
        ProcessUsage usage = sampler.Sample(pids);
        std::optional<double> gpu_mem;
        if (usage.gpu_memory_bytes) gpu_mem = static_cast<double>(*usage.gpu_memory_bytes);
        beat.sample = ResourceSample{clock_.WallMillis(), usage.cpu_percent, usage.rss_bytes, progress,
                                     usage.gpu_util_percent, gpu_mem, usage.rss_peak_bytes};
      }
      int64_t sent = clock_.NowMillis();
      auto reply = heartbeats_.Post(kHeartbeatPath, Encode(beat), 5000);
      next_heartbeat = now + heartbeat_ms;
      if (progress_due) {
        progress_changed = false;
        last_progress_report = now;
      }
      auto answer = reply.ok() ? Decode<HeartbeatReply>(*reply) : Result<HeartbeatReply>(reply.status());
      if (reply.ok() && !answer.ok()) LogError("the AM's heartbeat reply: " + answer.status().message());
      if (answer.ok()) {
        rtt_ms = static_cast<double>(clock_.NowMillis() - sent);
        metrics.clear();
        am_silent_since = 0;
        if (!answer->keep_running) stop_requested_ = true;
        if (answer->preempt && !preempt_) preempt_ = answer->preempt;
        for (const std::string& name : answer->save_models) data_->RequestSave(name);
        if (answer->dump_stacks) AnswerStackRequest(*answer->dump_stacks, pids, log_fd);
      } else if (reply.status().code() == StatusCode::kAborted || reply.status().code() == StatusCode::kNotFound) {
        stop_requested_ = true;
      } else if (am_silent_since == 0) {
        am_silent_since = now;
      } else if (now - am_silent_since > 60'000) {
        LogError("the AM has not answered for a minute; stopping the program");
        stop_requested_ = true;
      }
    }
    if ((stop_requested_ || stopping_) && kill_at == 0) {
      int64_t grace = options_.stop_grace_ms;
      if (!preempt_ && terminated_ && options_.preemption_probe) {
        // SIGTERM from outside Shoal: the cluster's own preemption (Slurm's)?
        if (std::string reason = options_.preemption_probe(); !reason.empty()) {
          preempt_ = PreemptNotice{reason, preemption_grace_ms_};
        }
      }
      if (preempt_) {
        // Preempted: the program is told, and has the grace to checkpoint.
        WritePreemptionFile(*preempt_);
        grace = preempt_->grace_ms;
      }
      signal_all(SIGTERM);
      kill_at = now + grace;
    }
    if (kill_at != 0 && now >= kill_at) signal_all(SIGKILL);
  }
  if (kill_at != 0) {
    // Stopped: what is left in the programs' groups may finish its output until the grace
    // ends (the pipes close when the last writer exits), then is killed.
    while (capture.open() && clock_.NowMillis() < kill_at) WaitForEvent(capture, {}, kill_at);
    for (pid_t pid : pids) processes_.SignalGroup(pid, SIGKILL);
  }
  for (int fd : exit_fds) {
    if (fd >= 0) close(fd);
  }
  // The programs have ended: the guard has nothing left to guard.
  StopAgentGuard(processes_, programs.guard);
  // What the programs left running in sessions of their own ends with them.
  for (const std::string& command : EndAdoptedOrphans({programs.board})) {
    std::string note = "==== shoal: ended '" + command + "', which the program left running ====\n";
    if (log_fd >= 0 && write(log_fd, note.data(), note.size()) < 0) LogError(note);
  }
  capture.Drain();
  ExitInfo exit = failure ? *failure : *exits.front();
  if (!failure) {
    for (const auto& e : exits) {
      if (!e->success()) exit = *e;  // stopped from outside: any of them tells how
    }
  }
  std::string message = exit.success() ? "" : exit.Describe();
  if (!exit.success() && pids.size() > 1 && failure) {
    message = "local rank " + std::to_string(failed_local_rank) + " " + message;
  }
  if (!exit.success() && !last_error_line.empty()) message += ": " + last_error_line;
  if (!exit.success() && !confined_.empty()) {
    // The kernel ended a process of the task for its memory: that, not the signal, is why.
    if (CgroupUsage usage = ReadUsage(confined_); CountOomKills(confined_) > oom_kills_before_) {
      message = OutOfMemoryMessage(options_.role, options_.index, usage.memory_limit_bytes, usage.memory_peak_bytes);
    }
  }
  RemoveContainers(programs);
  if (checkpoints_) {
    // The checkpoint a preempted program wrote in its grace, or any marked at its end.
    Status last = WhileHeartbeating(heartbeat_ms, [&] { return checkpoints_->Finish(); });
    WriteCheckpointNotes(log_fd);
    if (!last.ok()) LogError("the last checkpoint: " + last.ToString());
  }
  if (data_) {
    data_->Finish();
    // A preempted program's outputs are not complete, whatever its exit code.
    bool commit_as_succeeded = exit.success() && !preempt_;
    if (Status s = data_->has_outputs()
                       ? WhileHeartbeating(heartbeat_ms,
                                           [&] { return data_->CommitOutputs(commit_as_succeeded, &stop_requested_); })
                       : Status::Ok();
        !s.ok()) {
      LogError(s.ToString());
      if (exit.success()) exit = ExitInfo{1, 0};
      message = (message.empty() ? "" : message + "; ") + "uploading the outputs failed: " + s.message();
    }
  }
  ReportExit(exit, message);
  return 0;
}

Status ContainerAgent::WhileHeartbeating(int heartbeat_ms, const std::function<Status()>& work) {
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;  // GUARDED_BY(mutex)
  Status status;
  std::thread commit([&] {
    Status committed = work();
    std::lock_guard lock(mutex);
    status = std::move(committed);
    done = true;
    finished.notify_all();
  });
  std::unique_lock lock(mutex);
  while (!clock_.WaitFor(finished, lock, heartbeat_ms, [&] { return done; })) {
    lock.unlock();
    HeartbeatRequest beat{.task = Task(), .uploading = true};  // activity: a long upload is not a hang
    (void)heartbeats_.Post(kHeartbeatPath, Encode(beat), 5000);
    lock.lock();
  }
  lock.unlock();
  commit.join();
  return status;
}

void ContainerAgent::WriteCheckpointNotes(int log_fd) {
  if (!checkpoints_) return;
  for (const std::string& note : checkpoints_->TakeNotes()) {
    std::string line = "==== shoal: " + note + " ====\n";
    if (log_fd < 0 || write(log_fd, line.data(), line.size()) < 0) LogInfo(note);
  }
}

void ContainerAgent::WritePreemptionFile(const PreemptNotice& notice) {
  int64_t deadline_s = (clock_.WallMillis() + notice.grace_ms) / 1000;
  std::string text = "SHOAL_PREEMPTED=1\nSHOAL_PREEMPTED_REASON=" + ShellQuote(notice.reason) +
                     "\nSHOAL_PREEMPTION_DEADLINE=" + std::to_string(deadline_s) + "\n";
  if (Status s = WriteFileAtomic(preemption_file_, text); !s.ok()) LogError("the preemption file: " + s.ToString());
}

void ContainerAgent::AnswerStackRequest(int64_t id, const std::vector<pid_t>& pids, int log_fd) {
  std::string text = DumpStacks(processes_, pids);
  std::string block = "\n==== shoal stack: stacks of " + options_.role + "[" + std::to_string(options_.index) +
                      "] at " + FormatLocalTime(clock_.WallMillis()) + " ====\n" + text + "==== end of stacks ====\n";
  if (log_fd >= 0 && write(log_fd, block.data(), block.size()) < 0) LogError("cannot append the stacks to the task log");
  constexpr size_t kMaxAnswer = 256 * 1024;  // the log keeps all of it
  if (text.size() > kMaxAnswer) text = text.substr(0, kMaxAnswer) + "\n(cut; the task log has the rest)\n";
  auto reply = am_.Post(kStacksPath, Encode(StacksAnswer{Task(), id, text}), 5000);
  if (!reply.ok()) LogError("cannot send the stacks to the AM: " + reply.status().message());
}

void ContainerAgent::ReportExit(const ExitInfo& exit, const std::string& message) {
  Json body = Encode(ExitRequest{Task(), exit, message, terminated_});
  Backoff backoff(clock_, 100, 1'000);
  for (int attempt = 0; attempt < 20; ++attempt) {
    auto reply = am_.Post(kExitedPath, body, 5000);
    // A busy AM may answer late: the report is repeated (the AM takes the first
    // one and acknowledges the others), never dropped, since the agent's own exit
    // would otherwise read as a container that ended before its task.
    const StatusCode code = reply.ok() ? StatusCode::kOk : reply.status().code();
    if (code != StatusCode::kUnavailable && code != StatusCode::kTimeout) return;
    if (attempt == 0) LogError("reporting the program's end to the AM: " + reply.status().message() + "; retrying");
    backoff.Wait();
  }
  LogError("could not report the program's end to the AM");
}

}  // namespace shoal
