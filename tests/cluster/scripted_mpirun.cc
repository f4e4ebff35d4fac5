#include "tests/cluster/scripted_mpirun.h"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <sstream>

#include "common/files.h"
#include "master/mpi_agent_command.h"
#include "master/mpi_launch.h"
#include "protocol/task_messages.h"

namespace shoal::testing {

ScriptedMpirun::~ScriptedMpirun() {
  std::map<pid_t, std::unique_ptr<Run>> runs;
  {
    std::lock_guard lock(mutex_);
    for (auto& [pid, run] : runs_) run->signal = SIGKILL;
    changed_.notify_all();
    runs.swap(runs_);
  }
  for (auto& [pid, run] : runs) {
    if (run->thread.joinable()) run->thread.join();
    for (std::thread& agent : run->agents) agent.join();
  }
}

void ScriptedMpirun::Script(MpirunScript script) {
  std::lock_guard lock(mutex_);
  script_ = std::move(script);
}

Result<pid_t> ScriptedMpirun::Spawn(const SpawnOptions& options) {
  auto flag = std::find(options.argv.begin(), options.argv.end(), "--hostfile");
  if (flag == options.argv.end() || flag + 1 == options.argv.end()) return InvalidArgument("mpirun without --hostfile");
  ASSIGN_OR_RETURN(std::string hostfile, ReadFile(*(flag + 1)));
  std::vector<std::string> hosts;
  std::istringstream lines(hostfile);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) hosts.push_back(line.substr(0, line.find(' ')));
  }
  auto am = options.env.find("SHOAL_AM_ADDR");
  auto token = options.env.find(protocol::kMpiTokenVariable);
  if (am == options.env.end() || token == options.env.end()) return InvalidArgument("mpirun without the AM's address and token");
  int out = options.stdout_fd >= 0 ? dup(options.stdout_fd) : -1;
  std::lock_guard lock(mutex_);
  pid_t pid = next_pid_++;
  Run& run = *(runs_[pid] = std::make_unique<Run>());
  run.thread = std::thread([this, &run, script = script_, hosts, am = am->second, token = token->second, out] {
    Play(run, script, hosts, am, token, out);
  });
  return pid;
}

void ScriptedMpirun::Play(Run& run, MpirunScript script, std::vector<std::string> hosts, std::string am, std::string token,
                          int out_fd) {
  std::vector<std::thread> agents;
  for (const std::string& host : hosts) {
    auto orted = script.orteds.find(RankFromMpiHost(host).value_or(-1));
    std::string command = orted == script.orteds.end() ? "hang" : orted->second;
    agents.emplace_back([call = MpiAgentCall{am, token, host, command}] { (void)RunMpiAgent(call); });
  }
  std::unique_lock lock(mutex_);
  run.agents = std::move(agents);
  clock_.WaitFor(changed_, lock, script.run_millis, [&] { return run.signal != 0; });
  if (run.signal == 0) {
    lock.unlock();
    if (out_fd >= 0) (void)!write(out_fd, script.output.data(), script.output.size());
    lock.lock();
    run.exit = ExitInfo{script.exit_code, 0};
  } else {
    run.exit = ExitInfo{0, run.signal};
  }
  if (out_fd >= 0) close(out_fd);
  changed_.notify_all();
}

void ScriptedMpirun::Signal(pid_t pid, int sig) {
  std::lock_guard lock(mutex_);
  auto it = runs_.find(pid);
  if (it == runs_.end() || it->second->exit) return;
  it->second->signal = sig;
  changed_.notify_all();
}

std::optional<ExitInfo> ScriptedMpirun::TryWait(pid_t pid) {
  std::lock_guard lock(mutex_);
  auto it = runs_.find(pid);
  if (it == runs_.end()) return ExitInfo{255, 0};
  return it->second->exit;
}

ExitInfo ScriptedMpirun::Wait(pid_t pid) {
  std::unique_lock lock(mutex_);
  auto it = runs_.find(pid);
  if (it == runs_.end()) return ExitInfo{255, 0};
  changed_.wait(lock, [&] { return it->second->exit.has_value(); });
  return *it->second->exit;
}

}  // namespace shoal::testing
