// TaskIsolation: the control group a local server keeps its jobs in, or why it has none.
//
// Contract:
//  - PrepareTaskIsolation(name) makes `name` below the server's own groups, to hold one
//    group per job attempt (which holds the attempt's AM and one group per task):
//      v1: a directory in each controller's hierarchy;
//      v2: the server's own group must delegate the memory, cpu and pids controllers to
//          its children, which the kernel allows only while it holds no process: when it
//          does, the server first moves itself into a leaf group of its own, `name`-server,
//          as a service with systemd's Delegate=yes is expected to.
//    Where it cannot (no cgroup controllers mounted, not root and nothing delegated), the
//    result holds no group and `not_enforced` says why and how to fix it; the server says
//    so at start, and the API's cluster view shows it. Nothing fails: tasks then run
//    without limits, as before.
//  - OutOfMemoryMessage is the sentence a task killed for its memory ends with, wherever
//    it ran (a Slurm step's cgroup counts the same way).
//  - AttemptGroup/TaskGroup name the groups below it: `<job>.<attempt>`, then `am` and
//    `<role>-<index>`.
// Thread-safety: plain values; PrepareTaskIsolation is called once at start.
#pragma once

#include <string>

#include "isolation/cgroup_group.h"

namespace shoal {

struct TaskIsolation {
  CgroupGroup jobs;          // the parent of every attempt's group; empty: limits not enforced
  std::string not_enforced;  // why not ("" when enforced)

  bool enforced() const { return !jobs.empty(); }
  // "memory, CPU and process limits enforced with cgroup v1 (...)" or "not enforced: ...".
  std::string Describe() const;
};

TaskIsolation PrepareTaskIsolation(const std::string& name);

CgroupGroup AttemptGroup(const CgroupGroup& jobs, const std::string& job_id, int attempt);
inline CgroupGroup AmGroup(const CgroupGroup& attempt) { return attempt.Child("am"); }
CgroupGroup TaskGroup(const CgroupGroup& attempt, const std::string& role, int index);

// Why a task ended, when the kernel's OOM killer ended a process of its group: "worker[1]
// used more than its 2G of memory (peak 2.0G) and was killed by the kernel; raise
// roles.worker.memory".
std::string OutOfMemoryMessage(const std::string& role, int index, int64_t limit_bytes, int64_t peak_bytes);

// The most processes (and threads) one task may hold at once: ends a fork bomb, and is
// far above what a training program with data-loader workers starts.
inline constexpr int64_t kTaskPidsLimit = 16384;

}  // namespace shoal
