#include "bench/scale/forked_am_backend.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "bench/scale/am_process.h"
#include "bench/scale/launch_pipe.h"
#include "common/files.h"
#include "protocol/attempt_messages.h"

extern char** environ;

namespace shoal::bench {
namespace {

// CPU seconds and the high-water mark of RSS of a running process, from /proc.
AmUsage ReadProc(pid_t pid) {
  AmUsage usage{pid};
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  if (size_t paren = text.rfind(')'); paren != std::string::npos) {
    std::istringstream fields(text.substr(paren + 2));
    std::string field;
    long long utime = 0, stime = 0;
    for (int i = 3; i <= 15 && fields >> field; ++i) {  // field 3 is the state
      if (i == 14) utime = std::atoll(field.c_str());
      if (i == 15) stime = std::atoll(field.c_str());
    }
    usage.cpu_seconds = static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
  }
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("VmHWM:")) usage.peak_rss_bytes = std::atoll(line.c_str() + 6) * 1024;
  }
  return usage;
}

}  // namespace

ForkedAmBackend::ForkedAmBackend(SimulatedAgents& agents, std::string self, int heartbeat_ms, int tasks)
    : agents_(agents), self_(std::move(self)), heartbeat_ms_(heartbeat_ms), tasks_(tasks) {}

ForkedAmBackend::~ForkedAmBackend() {
  std::map<std::string, std::unique_ptr<Am>> ams;
  {
    std::lock_guard lock(mutex_);
    ams.swap(ams_);
  }
  for (auto& [id, am] : ams) {
    kill(am->pid, SIGKILL);
    if (am->reaper.joinable()) am->reaper.join();
    close(am->to_am);  // the relay reads until the AM's end of its pipe closes
    if (am->relay.joinable()) am->relay.join();
    close(am->from_am);
  }
}

ClusterCapacity ForkedAmBackend::Capacity() const {
  Resources room{static_cast<double>(tasks_) + 64, (static_cast<int64_t>(tasks_) + 64) << 30, 0};
  return ClusterCapacity{room, room};
}

Result<AttemptHandle> ForkedAmBackend::StartAttempt(const AttemptLaunch& launch) {
  RETURN_IF_ERROR(MakeDirectories(launch.attempt_dir));
  int to_bench[2], to_am[2];
  if (pipe2(to_bench, O_CLOEXEC) != 0) return Internal("pipe2 failed");
  if (pipe2(to_am, O_CLOEXEC) != 0) return Internal("pipe2 failed");
  std::vector<std::string> args = {self_,          "am",     "--server",     launch.server_url,
                                   "--job",        launch.job_id, "--attempt", std::to_string(launch.attempt),
                                   "--dir",        launch.attempt_dir, "--server-info", launch.server_info,
                                   "--heartbeat-ms", std::to_string(heartbeat_ms_)};
  std::vector<std::string> env = {std::string(protocol::kAttemptTokenVariable) + "=" + launch.token};
  for (char** e = environ; *e; ++e) env.push_back(*e);
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  for (auto& e : env) envp.push_back(e.data());
  argv.push_back(nullptr);
  envp.push_back(nullptr);
  std::string log = launch.attempt_dir + "/am.log";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, to_bench[1], kToBenchFd);
  posix_spawn_file_actions_adddup2(&actions, to_am[0], kFromBenchFd);
  posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  pid_t pid = 0;
  int spawned = posix_spawn(&pid, self_.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(to_bench[1]);
  close(to_am[0]);
  if (spawned != 0) {
    close(to_bench[0]);
    close(to_am[1]);
    return Internal("cannot start the AM: " + std::string(strerror(spawned)));
  }
  auto am = std::make_unique<Am>();
  am->pid = pid;
  am->to_am = to_am[1];
  am->from_am = to_bench[0];
  Am* raw = am.get();
  am->relay = std::thread([this, raw] {
    ReadLines(raw->from_am, [this, raw](const std::string& line) {
      std::vector<std::string> w = ParseLaunchLine(line);
      if (w.size() == 6 && w[0] == "launch") agents_.Launch(w[1], w[2], std::atoi(w[3].c_str()), w[4], w[5], raw->to_am);
      if (w.size() == 2 && w[0] == "stop") agents_.Stop(w[1]);
    });
  });
  am->reaper = std::thread([this, raw] {
    int status = 0;
    struct rusage usage {};
    while (wait4(raw->pid, &status, 0, &usage) < 0 && errno == EINTR) {
    }
    {
      std::lock_guard lock(mutex_);
      raw->exit = WIFSIGNALED(status) ? ExitInfo{128 + WTERMSIG(status), WTERMSIG(status)}
                                      : ExitInfo{WEXITSTATUS(status), 0};
      raw->usage = AmUsage{raw->pid,
                           static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                               static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6,
                           static_cast<int64_t>(usage.ru_maxrss) * 1024, true};
    }
    ended_.notify_all();
    if (changed_) changed_();
  });
  std::string id = launch.job_id + "/" + std::to_string(launch.attempt);
  std::lock_guard lock(mutex_);
  newest_ = raw;
  ams_[id] = std::move(am);
  return AttemptHandle{id};
}

std::optional<ExitInfo> ForkedAmBackend::PollAttempt(const AttemptHandle& handle) {
  std::lock_guard lock(mutex_);
  auto it = ams_.find(handle.backend_id);
  return it == ams_.end() ? std::optional<ExitInfo>(ExitInfo{255, 0}) : it->second->exit;
}

void ForkedAmBackend::KillAttempt(const AttemptLaunch&, const AttemptHandle& handle) {
  std::unique_lock lock(mutex_);
  auto it = ams_.find(handle.backend_id);
  if (it == ams_.end()) return;
  Am* am = it->second.get();
  if (!am->exit) kill(am->pid, SIGTERM);
  ended_.wait(lock, [am] { return am->exit.has_value(); });
}

bool ForkedAmBackend::AttemptAlive(const AttemptHandle& handle) const {
  std::lock_guard lock(mutex_);
  auto it = ams_.find(handle.backend_id);
  return it != ams_.end() && !it->second->exit;
}

AmUsage ForkedAmBackend::Usage() const {
  std::lock_guard lock(mutex_);
  if (!newest_) return {};
  return newest_->exit ? newest_->usage : ReadProc(newest_->pid);
}

}  // namespace shoal::bench
