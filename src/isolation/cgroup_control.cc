#include "isolation/cgroup_control.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <sstream>
#include <thread>

#include "common/files.h"

namespace shoal {
namespace {

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

Status WriteControl(const std::string& path, const std::string& value) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Internal("cannot open " + path + ": " + strerror(errno));
  ssize_t n = write(fd, value.data(), value.size());
  int error = errno;
  close(fd);
  if (n != static_cast<ssize_t>(value.size())) {
    return Internal("cannot write '" + value + "' to " + path + ": " + strerror(n < 0 ? error : EIO));
  }
  return Status::Ok();
}

int64_t ReadNumber(const std::string& path) {
  auto text = ReadFile(path);
  if (!text.ok()) return 0;
  try {
    return std::stoll(*text);
  } catch (...) {
    return 0;  // "max", or empty
  }
}

// The value of `key` in a flat-keyed file (memory.stat, memory.events, cpu.stat, memory.oom_control).
int64_t ReadKey(const std::string& path, const std::string& key) {
  auto text = ReadFile(path);
  if (!text.ok()) return 0;
  std::istringstream lines(*text);
  std::string name;
  int64_t value = 0;
  while (lines >> name >> value) {
    if (name == key) return value;
  }
  return 0;
}

// `dir` and every directory below it, deepest first.
std::vector<std::string> Tree(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* entry = readdir(d)) {
      std::string name = entry->d_name;
      if (name == "." || name == "..") continue;
      std::string path = dir + "/" + name;
      struct stat st{};
      if (lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
        for (std::string& below : Tree(path)) out.push_back(std::move(below));
      }
    }
    closedir(d);
    out.push_back(dir);
  }
  return out;
}

// The directory whose cgroup.procs lists the group's processes: the memory hierarchy's,
// which every group has (FindCgroups and Decode require it) and every task joins.
std::string ProcessDirectory(const CgroupGroup& group) { return group.Dir("memory"); }

void Freeze(const CgroupGroup& group, bool frozen) {
  if (group.version == 2) {
    std::string file = group.Dir("memory") + "/cgroup.freeze";
    if (Exists(file)) (void)WriteControl(file, frozen ? "1" : "0");
  } else if (std::string freezer = group.Dir("freezer"); !freezer.empty() && Exists(freezer + "/freezer.state")) {
    (void)WriteControl(freezer + "/freezer.state", frozen ? "FROZEN" : "THAWED");
  }
}

}  // namespace

Status DelegateControllers(const CgroupGroup& group) {
  if (group.version != 2) return Status::Ok();
  std::string enable;
  for (const char* controller : kLimitedControllers) enable += (enable.empty() ? "+" : " +") + std::string(controller);
  return WriteControl(group.Dir("memory") + "/cgroup.subtree_control", enable);
}

Status CreateGroup(const CgroupGroup& group, const CgroupLimits& limits, bool parent_of_groups) {
  if (group.empty()) return InvalidArgument("no cgroup to create");
  for (const std::string& dir : group.Directories()) {
    if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      return Internal("cannot create the cgroup " + dir + ": " + strerror(errno));
    }
  }
  if (parent_of_groups) RETURN_IF_ERROR(DelegateControllers(group));
  const std::string memory = group.Dir("memory"), cpu = group.Dir("cpu"), pids = group.Dir("pids");
  const std::string bytes = std::to_string(limits.memory_bytes);
  const int64_t quota = limits.cpus > 0 ? std::max<int64_t>(1000, std::llround(limits.cpus * kCpuPeriodMicros)) : 0;
  if (group.version == 2) {
    if (limits.memory_bytes > 0) {
      RETURN_IF_ERROR(WriteControl(memory + "/memory.max", bytes));
      if (Exists(memory + "/memory.swap.max")) RETURN_IF_ERROR(WriteControl(memory + "/memory.swap.max", "0"));
    }
    if (quota > 0) RETURN_IF_ERROR(WriteControl(cpu + "/cpu.max", std::to_string(quota) + " " + std::to_string(kCpuPeriodMicros)));
  } else {
    if (limits.memory_bytes > 0) {
      RETURN_IF_ERROR(WriteControl(memory + "/memory.limit_in_bytes", bytes));
      if (Exists(memory + "/memory.memsw.limit_in_bytes")) {
        RETURN_IF_ERROR(WriteControl(memory + "/memory.memsw.limit_in_bytes", bytes));
      }
    }
    if (quota > 0 && !cpu.empty()) {
      RETURN_IF_ERROR(WriteControl(cpu + "/cpu.cfs_period_us", std::to_string(kCpuPeriodMicros)));
      RETURN_IF_ERROR(WriteControl(cpu + "/cpu.cfs_quota_us", std::to_string(quota)));
    }
  }
  if (limits.pids > 0 && !pids.empty()) RETURN_IF_ERROR(WriteControl(pids + "/pids.max", std::to_string(limits.pids)));
  return Status::Ok();
}

Status DelegateGroup(const CgroupGroup& group, uid_t uid, gid_t gid) {
  for (const std::string& dir : group.Directories()) {
    for (const std::string& path : {dir, dir + "/cgroup.procs", dir + "/tasks"}) {
      if (path != dir && !Exists(path)) continue;  // v2 has no tasks file
      if (chown(path.c_str(), uid, gid) != 0) {
        return Internal("cannot hand the cgroup " + path + " to uid " + std::to_string(uid) + ": " + strerror(errno));
      }
    }
  }
  return Status::Ok();
}

std::vector<std::string> ProcsFiles(const CgroupGroup& group) {
  std::vector<std::string> files;
  for (const std::string& dir : group.Directories()) files.push_back(dir + "/cgroup.procs");
  return files;
}

std::vector<pid_t> ProcessesIn(const CgroupGroup& group) {
  std::vector<pid_t> pids;
  for (const std::string& dir : Tree(ProcessDirectory(group))) {
    auto listed = ReadFile(dir + "/cgroup.procs");
    if (!listed.ok()) continue;
    std::istringstream in(*listed);
    for (pid_t pid; in >> pid;) pids.push_back(pid);
  }
  return pids;
}

int KillGroup(const CgroupGroup& group, int timeout_ms) {
  if (group.empty()) return 0;
  const std::string kill_file = ProcessDirectory(group) + "/cgroup.kill";
  if (group.version == 2 && Exists(kill_file)) (void)WriteControl(kill_file, "1");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  int signalled = 0;
  for (;;) {
    std::vector<pid_t> pids = ProcessesIn(group);
    pids.erase(std::remove(pids.begin(), pids.end(), getpid()), pids.end());
    if (pids.empty() || std::chrono::steady_clock::now() >= deadline) break;
    // Frozen, nothing in the group can fork a new process between the listing and the kill.
    Freeze(group, true);
    for (pid_t pid : ProcessesIn(group)) {
      if (pid != getpid() && kill(pid, SIGKILL) == 0) ++signalled;
    }
    Freeze(group, false);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return signalled;
}

void RemoveGroup(const CgroupGroup& group) {
  for (const std::string& top : group.Directories()) {
    for (const std::string& dir : Tree(top)) {
      // A group whose last process is still exiting is busy for a moment.
      for (int tries = 0; rmdir(dir.c_str()) != 0 && errno == EBUSY && tries < 1000; ++tries) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
  }
}

void RemoveGroupIfUnused(const CgroupGroup& group) {
  for (const std::string& dir : group.Directories()) (void)rmdir(dir.c_str());
}

int RemoveGroupsNamed(const std::vector<std::string>& dirs, const std::string& prefix) {
  if (prefix.empty()) return 0;
  CgroupGroup strays{1, {}};
  for (const std::string& dir : dirs) {
    DIR* d = opendir(dir.c_str());
    if (!d) continue;
    while (dirent* entry = readdir(d)) {
      std::string name = entry->d_name;
      if (entry->d_type == DT_DIR && name.starts_with(prefix)) strays.dirs[dir + "/" + name] = dir + "/" + name;
    }
    closedir(d);
  }
  RemoveGroup(strays);
  return static_cast<int>(strays.dirs.size());
}

int64_t CountOomKills(const CgroupGroup& group) {
  const std::string memory = group.Dir("memory");
  if (group.version == 2) return ReadKey(memory + "/memory.events", "oom_kill");
  // v1 counts a kill only in the victim's own group, not its parents' (v2's memory.events
  // is hierarchical): a container's runtime makes a child group here.
  int64_t kills = 0;
  for (const std::string& dir : Tree(memory)) kills += ReadKey(dir + "/memory.oom_control", "oom_kill");
  return kills;
}

CgroupUsage ReadUsage(const CgroupGroup& group) {
  CgroupUsage usage;
  const std::string memory = group.Dir("memory");
  if (group.version == 2) {
    int64_t current = ReadNumber(memory + "/memory.current");
    usage.memory_bytes = std::max<int64_t>(0, current - ReadKey(memory + "/memory.stat", "inactive_file"));
    usage.memory_peak_bytes = std::max(current, ReadNumber(memory + "/memory.peak"));
    usage.memory_limit_bytes = ReadNumber(memory + "/memory.max");
    usage.oom_kills = ReadKey(memory + "/memory.events", "oom_kill");
    usage.cpu_usage_ns = ReadKey(group.Dir("cpu") + "/cpu.stat", "usage_usec") * 1000;
  } else {
    int64_t current = ReadNumber(memory + "/memory.usage_in_bytes");
    usage.memory_bytes = std::max<int64_t>(0, current - ReadKey(memory + "/memory.stat", "total_inactive_file"));
    usage.memory_peak_bytes = std::max(current, ReadNumber(memory + "/memory.max_usage_in_bytes"));
    int64_t limit = ReadNumber(memory + "/memory.limit_in_bytes");
    usage.memory_limit_bytes = limit >= (int64_t{1} << 62) ? 0 : limit;  // v1 says "unlimited" with a huge number
    usage.oom_kills = ReadKey(memory + "/memory.oom_control", "oom_kill");
    if (std::string cpuacct = group.Dir("cpuacct"); !cpuacct.empty()) {
      usage.cpu_usage_ns = ReadNumber(cpuacct + "/cpuacct.usage");
    }
  }
  return usage;
}

}  // namespace shoal
