#include "tests/cluster/scripted_processes.h"

#include <unistd.h>

#include <csignal>
#include <sstream>

namespace shoal::testing {

ScriptedProcesses::~ScriptedProcesses() {
  std::map<pid_t, std::unique_ptr<Script>> scripts;
  {
    std::lock_guard lock(mutex_);
    for (auto& [pid, script] : scripts_) script->signal = SIGKILL;
    changed_.notify_all();
    scripts.swap(scripts_);
  }
  for (auto& [pid, script] : scripts) {
    if (script->thread.joinable()) script->thread.join();
  }
}

Result<pid_t> ScriptedProcesses::Spawn(const SpawnOptions& options) {
  // The agent closes its copy of the pipe's write end when Spawn returns: keep our own of
  // stdout. stderr is not scripted: with no copy kept, it reads as closed at once.
  int out = options.stdout_fd >= 0 ? dup(options.stdout_fd) : -1;
  std::string script = options.argv.empty() ? "" : options.argv.back();
  auto attempt = options.env.find("SHOAL_ATTEMPT");
  std::string attempt_number = attempt == options.env.end() ? "" : attempt->second;
  std::lock_guard lock(mutex_);
  pid_t pid = next_pid_++;
  auto& entry = scripts_[pid];
  entry = std::make_unique<Script>();
  entry->thread = std::thread([this, pid, script, attempt_number, out] { Run(pid, script, attempt_number, out); });
  return pid;
}

void ScriptedProcesses::Run(pid_t pid, std::string script, std::string attempt, int out_fd) {
  std::istringstream steps(script);
  ExitInfo exit{0, 0};
  std::unique_lock lock(mutex_);
  auto killed = [&] { return scripts_.at(pid)->signal != 0; };
  for (std::string step; !killed() && steps >> step;) {
    if (step.starts_with("print:")) {
      std::string line = step.substr(6) + "\n";
      lock.unlock();
      if (out_fd >= 0) (void)!write(out_fd, line.data(), line.size());
      lock.lock();
    } else if (step.starts_with("sleep:")) {
      clock_.WaitFor(changed_, lock, std::stoi(step.substr(6)), killed);
    } else if (step.starts_with("exit:")) {
      exit = ExitInfo{std::stoi(step.substr(5)), 0};
      break;
    } else if (step.starts_with("only-attempt:")) {
      if (step.substr(13) != attempt) break;
    } else if (step == "hang") {
      changed_.wait(lock, killed);
    }
  }
  if (killed()) exit = ExitInfo{0, scripts_.at(pid)->signal};
  if (out_fd >= 0) close(out_fd);
  scripts_.at(pid)->exit = exit;
  changed_.notify_all();
}

void ScriptedProcesses::Signal(pid_t pid, int sig) {
  std::lock_guard lock(mutex_);
  auto it = scripts_.find(pid);
  if (it == scripts_.end() || it->second->exit || (sig != SIGTERM && sig != SIGKILL)) return;
  it->second->signal = sig;
  changed_.notify_all();
}

std::optional<ExitInfo> ScriptedProcesses::TryWait(pid_t pid) {
  std::lock_guard lock(mutex_);
  auto it = scripts_.find(pid);
  if (it == scripts_.end()) return ExitInfo{255, 0};
  return it->second->exit;
}

int ScriptedProcesses::Running() {
  std::lock_guard lock(mutex_);
  int running = 0;
  for (const auto& [pid, script] : scripts_) running += !script->exit.has_value();
  return running;
}

ExitInfo ScriptedProcesses::Wait(pid_t pid) {
  std::unique_lock lock(mutex_);
  auto it = scripts_.find(pid);
  if (it == scripts_.end()) return ExitInfo{255, 0};
  changed_.wait(lock, [&] { return it->second->exit.has_value(); });
  return *it->second->exit;
}

}  // namespace shoal::testing
