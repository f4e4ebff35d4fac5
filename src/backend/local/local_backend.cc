#include "backend/local/local_backend.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/clock.h"
#include "common/files.h"
#include "common/inherited_environment.h"
#include "common/log.h"
#include "common/paths.h"
#include "isolation/cgroup_control.h"
#include "isolation/oci_bundle.h"
#include "protocol/attempt_messages.h"

namespace shoal {
namespace {

int CountNvidiaGpus() {
  if (access("/usr/bin/nvidia-smi", X_OK) != 0) return 0;
  FILE* pipe = popen("/usr/bin/nvidia-smi -L 2>/dev/null", "r");
  if (!pipe) return 0;
  int count = 0;
  char line[512];
  while (fgets(line, sizeof line, pipe)) count += std::string(line).starts_with("GPU ");
  pclose(pipe);
  return count;
}

int64_t MemTotalBytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t kb = 0;
  std::string unit;
  while (meminfo >> key >> kb >> unit) {
    if (key == "MemTotal:") return kb * 1024;
  }
  return 1LL << 30;
}

int OpenLog(const std::string& path) {
  if (path.empty()) return -1;
  return open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

// The AM's pid, from a handle this backend made; 0 (no process) for a damaged one.
pid_t PidOf(const AttemptHandle& handle) {
  char* end = nullptr;
  long pid = std::strtol(handle.backend_id.c_str(), &end, 10);
  return (end && *end == '\0' && pid > 0 && pid < (1L << 22)) ? static_cast<pid_t>(pid) : 0;
}

}  // namespace

ClusterCapacity DetectLocalCapacity() {
  Resources machine{static_cast<double>(std::max(1u, std::thread::hardware_concurrency())), MemTotalBytes(),
                    CountNvidiaGpus()};
  return {machine, machine};
}

LocalBackend::LocalBackend(ClusterCapacity capacity, std::string shoal_executable, ProcessLauncher& processes,
                           TaskIsolation isolation, int kill_grace_ms)
    : capacity_(capacity), isolation_(std::move(isolation)), executable_(std::move(shoal_executable)),
      processes_(processes), kill_grace_ms_(kill_grace_ms) {
  if (auto own = CurrentAccount(); own.ok()) own_account_ = *own;
}

namespace {

// What a whole attempt may use: its tasks' limits added up, and the AM's allowance.
CgroupLimits WholeAttemptLimits(const JobSpec& spec) {
  CgroupLimits limits{kAmMemoryAllowance, 1, 1024};
  for (const RoleSpec& role : spec.roles) {
    limits.memory_bytes += role.instances * role.resources.memory_bytes;
    limits.cpus += role.instances * role.resources.cpus;
    limits.pids += role.instances * kTaskPidsLimit;
  }
  return limits;
}

}  // namespace

Result<CgroupGroup> LocalBackend::MakeAttemptGroup(const AttemptLaunch& launch, const UnixAccount* account) {
  CgroupGroup attempt = AttemptGroup(isolation_.jobs, launch.job_id, launch.attempt);
  Status made = CreateGroup(attempt, account ? WholeAttemptLimits(launch.spec) : CgroupLimits{}, /*parent_of_groups=*/true);
  if (made.ok()) made = CreateGroup(AmGroup(attempt), {});
  if (made.ok() && account) made = DelegateGroup(attempt, account->uid, account->gid);
  if (!made.ok()) return made.WithContext("cannot make the attempt's cgroup");
  return attempt;
}

Result<AttemptHandle> LocalBackend::StartAttempt(const AttemptLaunch& launch) {
  std::optional<UnixAccount> account;
  if (!launch.run_as.empty() && launch.run_as != own_account_.name) {
    ASSIGN_OR_RETURN(account, LookUpAccount(launch.run_as));
    if (account->uid == own_account_.uid) account.reset();
  }
  // The job's folder and the attempt's are the account's alone: no other job reads its logs.
  RETURN_IF_ERROR(MakeAttemptFolders(launch.attempt_dir, account ? &*account : nullptr));
  // The AM inherits only the allowlist, never the server's own environment.
  auto env = InheritedEnvironment(CurrentEnvironment());
  if (account) {
    env["HOME"] = account->home;
    env["USER"] = env["LOGNAME"] = account->name;
  }
  env[protocol::kAttemptTokenVariable] = launch.token;
  env["SHOAL_JOB_ID"] = launch.job_id;
  env["SHOAL_ATTEMPT"] = std::to_string(launch.attempt);
  // Unique to this server's home: the sweep must not reach job-1 of another server (or of a Slurm cluster).
  env["SHOAL_ATTEMPT_DIR"] = launch.attempt_dir;
  // The AM's agents are forks of its image (common/fork_server.h): bound at its exec, every
  // library call is resolved once, not again in each agent (lazy binding cost each agent
  // about a tenth of its CPU). The agents' environment is built anew, without it.
  env["LD_BIND_NOW"] = "1";
  std::vector<std::string> argv = {executable_, "am", "--server", launch.server_url, "--job", launch.job_id,
                                   "--attempt", std::to_string(launch.attempt), "--dir", launch.attempt_dir,
                                   "--backend", "local", "--server-info", launch.server_info};
  std::vector<std::string> join;
  if (isolation_.enforced()) {
    ASSIGN_OR_RETURN(CgroupGroup attempt, MakeAttemptGroup(launch, account ? &*account : nullptr));
    argv.insert(argv.end(), {"--cgroup", attempt.Encode()});
    join = ProcsFiles(AmGroup(attempt));
  }
  int log = OpenLog(launch.attempt_dir + "/am.log");
  if (log >= 0 && account && fchown(log, account->uid, account->gid) != 0) LogError("cannot give am.log to " + account->name);
  std::optional<ProcessIdentity> identity;
  if (account) identity = ProcessIdentity{account->uid, account->gid, account->groups};
  auto pid = processes_.Spawn({.argv = argv,
                               .env = env,
                               .cwd = launch.attempt_dir,
                               .new_session = true,
                               .stdout_fd = log,
                               .stderr_fd = log,
                               .join_cgroups = join,
                               .identity = identity});
  if (log >= 0) close(log);
  if (!pid.ok()) return pid.status().WithContext("cannot start the application master");
  std::lock_guard lock(mutex_);
  children_.insert(*pid);
  if (watcher_) watcher_->Watch(*pid);
  return AttemptHandle{std::to_string(*pid)};
}

std::optional<ExitInfo> LocalBackend::PollAttempt(const AttemptHandle& handle) {
  pid_t pid = PidOf(handle);
  {
    std::lock_guard lock(mutex_);
    if (children_.count(pid)) {
      auto exit = processes_.TryWait(pid);
      if (exit) children_.erase(pid);
      return exit;
    }
  }
  // Started by an earlier server process: not our child, so watch the pid.
  if (ProcessExists(pid)) return std::nullopt;
  return ExitInfo{.exit_code = 255, .signal = 0};
}

void LocalBackend::KillAttempt(const AttemptLaunch& launch, const AttemptHandle& handle) {
  pid_t pid = PidOf(handle);
  processes_.Signal(pid, SIGTERM);
  auto& clock = SystemClock::Instance();
  int64_t deadline = clock.NowMillis() + kill_grace_ms_;
  // Reaping here would steal the exit from PollAttempt: a zombie counts as ended.
  while (ProcessRunning(pid) && clock.NowMillis() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  processes_.SignalGroup(pid, SIGKILL);
  CleanUpAttempt(launch);
}

void LocalBackend::CleanUpAttempt(const AttemptLaunch& launch) {
  if (isolation_.enforced()) {
    CgroupGroup attempt = AttemptGroup(isolation_.jobs, launch.job_id, launch.attempt);
    if (int left = KillGroup(attempt); left > 0) {
      LogInfo(launch.job_id + " attempt " + std::to_string(launch.attempt) + ": ended " + std::to_string(left) +
              " process(es) left in its cgroup");
    }
    RemoveGroup(attempt);
    // What the containers' runtime made in the hierarchies Shoal does not manage, where an
    // agent killed before it removed its containers left it.
    auto mountinfo = ReadFile("/proc/self/mountinfo");
    auto own = ReadFile("/proc/self/cgroup");
    if (mountinfo.ok() && own.ok()) {
      RemoveGroupsNamed(OwnHierarchyDirectories(*mountinfo, *own), ContainerGroupPrefix(attempt.Dir("memory")));
    }
  }
  KillProcessesWithEnvironment({"SHOAL_JOB_ID=" + launch.job_id, "SHOAL_ATTEMPT=" + std::to_string(launch.attempt),
                                "SHOAL_ATTEMPT_DIR=" + launch.attempt_dir});
}

void LocalBackend::SetChangeCallback(std::function<void()> changed) {
  std::lock_guard lock(mutex_);
  watcher_ = std::make_unique<ChildWatcher>(std::move(changed));
}

void LocalContainerLauncher::SetChangeCallback(std::function<void()> changed) {
  watcher_ = std::make_unique<ChildWatcher>(std::move(changed));
}

std::vector<ClusterNode> LocalBackend::Nodes() {
  return {ClusterNode{HostName(), "up", "", capacity_.total, std::nullopt}};
}

bool LocalBackend::AttemptAlive(const AttemptHandle& handle) const {
  return ProcessExists(PidOf(handle));
}

Result<std::string> LocalContainerLauncher::Launch(const ContainerLaunch& launch) {
  CgroupGroup group;
  if (!attempt_group_.empty()) {
    group = TaskGroup(attempt_group_, launch.role, launch.index);
    CgroupLimits limits{launch.resources.memory_bytes, launch.resources.cpus, kTaskPidsLimit};
    if (Status s = CreateGroup(group, limits); !s.ok()) return s.WithContext("cannot make the task's cgroup");
  }
  int log = OpenLog(launch.agent_log);
  auto pid = processes_.Spawn({.argv = launch.argv,
                               .env = launch.env,
                               .cwd = launch.workdir,
                               .new_session = true,
                               .parent_death_signal = SIGTERM,
                               .stdout_fd = log,
                               .stderr_fd = log,
                               .join_cgroups = group.empty() ? std::vector<std::string>{} : ProcsFiles(group)});
  if (log >= 0) close(log);
  if (!pid.ok()) {
    RemoveGroup(group);
    return pid.status();
  }
  std::string id = "local-" + std::to_string(*pid);
  running_[id] = Running{*pid, 0, group};
  if (watcher_) watcher_->Watch(*pid);
  return id;
}

void LocalContainerLauncher::Stop(const std::string& container_id, int grace_ms) {
  auto it = running_.find(container_id);
  if (it == running_.end() || it->second.kill_at_ms != 0) return;
  processes_.Signal(it->second.pid, SIGTERM);
  it->second.kill_at_ms = SystemClock::Instance().NowMillis() + grace_ms;
}

void LocalContainerLauncher::KillContainer(const Running& container) {
  processes_.SignalGroup(container.pid, SIGKILL);
  if (!container.group.empty()) KillGroup(container.group);
}

void LocalContainerLauncher::Kill(const std::string& container_id) {
  auto it = running_.find(container_id);
  if (it != running_.end()) KillContainer(it->second);
}

std::vector<std::pair<std::string, ExitInfo>> LocalContainerLauncher::Poll() {
  std::vector<std::pair<std::string, ExitInfo>> ended;
  int64_t now = SystemClock::Instance().NowMillis();
  for (auto it = running_.begin(); it != running_.end();) {
    if (auto exit = processes_.TryWait(it->second.pid)) {
      // What the task left behind ends with it; the server removes the attempt's groups after it.
      if (!it->second.group.empty()) KillGroup(it->second.group);
      ended.emplace_back(it->first, *exit);
      it = running_.erase(it);
      continue;
    }
    if (it->second.kill_at_ms != 0 && now >= it->second.kill_at_ms) KillContainer(it->second);
    ++it;
  }
  return ended;
}

}  // namespace shoal
