#include "container/orphans.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <set>
#include <thread>

#include "container/process_tree.h"

namespace shoal {

bool AdoptOrphans() { return prctl(PR_SET_CHILD_SUBREAPER, 1) == 0; }

std::vector<std::string> EndAdoptedOrphans(const std::vector<pid_t>& keep, int timeout_ms) {
  std::vector<std::string> ended;
  std::set<pid_t> signalled;
  const pid_t self = getpid();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    std::vector<ProcessStat> table = ReadProcessTableBelow(self);
    std::vector<pid_t> children;
    for (const ProcessStat& p : table) {
      if (p.ppid == self && std::find(keep.begin(), keep.end(), p.pid) == keep.end()) children.push_back(p.pid);
    }
    if (children.empty() || std::chrono::steady_clock::now() >= deadline) return ended;
    for (const ProcessStat* p : TreeOf(table, children)) {
      if (p->pid == self) continue;
      if (!signalled.insert(p->pid).second) continue;
      if (std::string command = ProcessCommand(p->pid); !command.empty()) ended.push_back(std::move(command));
      kill(p->pid, SIGKILL);
    }
    for (pid_t child : children) {
      while (waitpid(child, nullptr, WNOHANG) < 0 && errno == EINTR) {
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace shoal
