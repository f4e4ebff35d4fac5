#include "container/process_tree.h"

#include <dirent.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace shoal {
namespace {

bool ReadStat(const char* pid, ProcessStat* out) {
  std::ifstream file(std::string("/proc/") + pid + "/stat");
  std::string text;
  if (!std::getline(file, text)) return false;
  size_t close = text.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos || close + 2 > text.size()) return false;
  std::istringstream fields(text.substr(close + 2));
  std::string state;
  long long ppid, group, skip, utime, stime, rss;
  fields >> state >> ppid >> group;
  for (int i = 0; i < 8; ++i) fields >> skip;  // session tty tpgid flags minflt cminflt majflt cmajflt
  fields >> utime >> stime;
  for (int i = 0; i < 8; ++i) fields >> skip;  // cutime cstime priority nice threads itrealvalue starttime vsize
  fields >> rss;
  if (!fields) return false;
  *out = {static_cast<pid_t>(std::atoll(pid)), static_cast<pid_t>(ppid), static_cast<pid_t>(group), utime + stime, rss};
  return true;
}

}  // namespace

std::vector<ProcessStat> ReadProcessTable() {
  std::vector<ProcessStat> all;
  if (DIR* proc = opendir("/proc")) {
    while (dirent* entry = readdir(proc)) {
      if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
      ProcessStat stat;
      if (ReadStat(entry->d_name, &stat)) all.push_back(stat);
    }
    closedir(proc);
  }
  return all;
}

namespace {

// The pids in /proc/PID/task/*/children (each thread's children); nullopt when the kernel
// has no such files (CONFIG_PROC_CHILDREN) or the process is gone.
std::optional<std::vector<pid_t>> ChildrenOf(pid_t pid) {
  std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = opendir(tasks.c_str());
  if (!dir) return std::nullopt;
  std::vector<pid_t> children;
  bool readable = false;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    std::ifstream file(tasks + "/" + entry->d_name + "/children");
    if (!file) continue;
    readable = true;
    for (pid_t child; file >> child;) children.push_back(child);
  }
  closedir(dir);
  if (!readable) return std::nullopt;
  return children;
}

}  // namespace

std::vector<ProcessStat> ReadProcessTableBelow(pid_t ancestor) {
  std::vector<ProcessStat> table;
  std::unordered_set<pid_t> seen;
  std::vector<pid_t> todo = {ancestor};
  while (!todo.empty()) {
    pid_t pid = todo.back();
    todo.pop_back();
    if (!seen.insert(pid).second) continue;
    ProcessStat stat;
    if (!ReadStat(std::to_string(pid).c_str(), &stat)) continue;  // gone meanwhile
    std::optional<std::vector<pid_t>> children = ChildrenOf(pid);
    if (!children && pid == ancestor) return ReadProcessTable();  // no children files on this kernel
    table.push_back(stat);
    if (children) todo.insert(todo.end(), children->begin(), children->end());
  }
  return table;
}

std::vector<const ProcessStat*> TreeOf(const std::vector<ProcessStat>& table, const std::vector<pid_t>& roots) {
  std::unordered_map<pid_t, std::vector<const ProcessStat*>> children;
  for (const auto& p : table) children[p.ppid].push_back(&p);
  std::vector<const ProcessStat*> todo;
  for (pid_t root : roots) {  // roots first, in the order given, then their groups
    for (const auto& p : table) {
      if (p.pid == root) todo.push_back(&p);
    }
  }
  for (const auto& p : table) {
    for (pid_t root : roots) {
      if (p.pgid == root && p.pid != root) todo.push_back(&p);
    }
  }
  std::reverse(todo.begin(), todo.end());  // a stack: the first root is taken first
  std::vector<const ProcessStat*> tree;
  std::unordered_set<pid_t> seen;
  while (!todo.empty()) {
    const ProcessStat* p = todo.back();
    todo.pop_back();
    if (!seen.insert(p->pid).second) continue;
    tree.push_back(p);
    const auto& kids = children[p->pid];
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) todo.push_back(*it);
  }
  return tree;
}

std::string ProcessCommand(pid_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  while (!raw.empty() && raw.back() == '\0') raw.pop_back();
  for (char& c : raw) {
    if (c == '\0') c = ' ';
  }
  return raw;
}

}  // namespace shoal
