// Creating, limiting, reading, killing and removing control groups, in either layout.
//
// Contract:
//  - CreateGroup makes the group's directory in every hierarchy and writes its limits:
//      memory: v2 memory.max and memory.swap.max = 0; v1 memory.limit_in_bytes and, where
//              swap is accounted, memory.memsw.limit_in_bytes equal to it (no swap beyond);
//      CPU:    v2 cpu.max "QUOTA 100000"; v1 cpu.cfs_period_us 100000, cpu.cfs_quota_us;
//              the quota is cpus x the period, at least 1 ms; no quota for 0 CPUs;
//      pids:   pids.max.
//    A zero memory or pids limit leaves that resource unlimited. With `parent_of_groups`
//    (v2 only) it enables the limited controllers for its children (cgroup.subtree_control),
//    which the kernel allows only while the group itself holds no process.
//  - ProcsFiles lists the cgroup.procs file of each hierarchy: a process writes "0" into
//    each to join the group (before it execs; see SpawnOptions::join_cgroups).
//  - DelegateGroup lets an account make groups below this one and move its own processes
//    between them (a job's AM running as its owner makes its tasks' groups): the group's
//    directory and the files that take processes (cgroup.procs, and v1's tasks) become the
//    account's in every hierarchy. The group's own limit files stay root's, so the
//    account cannot raise what the group was given; the limits of the groups it makes are
//    its own to set, and never take it beyond this group's.
//  - KillGroup ends every process in the group and in every group below it, double-forked
//    daemons included: v2 through cgroup.kill where the kernel has it; otherwise the
//    group is frozen (v2 cgroup.freeze, v1 freezer.state), each process gets SIGKILL,
//    and it thaws; repeated until no process is left or `timeout_ms` passed. It returns
//    how many processes it signalled (0 when cgroup.kill did the work).
//  - RemoveGroup removes the group and those below it, deepest first, in every hierarchy;
//    a directory that is already gone is not an error.
//  - RemoveGroupIfUnused removes the group's own directory in every hierarchy only where it
//    holds neither a process nor a group below it (one rmdir each, no waiting): a server
//    leaving its top group behind for the attempts that go on without it.
//  - RemoveGroupsNamed removes, directly below each of `dirs`, the groups whose names start
//    with `prefix` (and those below them): what container runtimes a task ran as root left
//    in hierarchies Shoal does not manage (isolation/oci_bundle.h's ContainerId). It
//    returns how many it found; an empty prefix removes nothing.
//  - ReadUsage reads what the kernel accounts: memory now and at its peak (v2's
//    memory.peak needs Linux 5.19; absent, the peak is the use now), the
//    limit, CPU time, and how many processes the kernel's OOM killer ended in the group.
//  - CountOomKills counts the OOM kills in the group and every group below it (v1 counts
//    a kill only in the victim's own group; a container runtime makes one below the
//    task's). It walks the subtree on v1: for a task's group, not a machine's root.
// Thread-safety: stateless functions; the kernel serialises concurrent writers.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "isolation/cgroup_group.h"

namespace shoal {

struct CgroupLimits {
  int64_t memory_bytes = 0;  // 0: unlimited
  double cpus = 0;           // 0: no quota
  int64_t pids = 0;          // 0: unlimited
};

struct CgroupUsage {
  int64_t memory_bytes = 0;       // now, page cache that can be reclaimed left out
  int64_t memory_peak_bytes = 0;  // the most it held (v1 max_usage_in_bytes, v2 memory.peak)
  int64_t memory_limit_bytes = 0; // 0: unlimited
  int64_t cpu_usage_ns = 0;       // CPU time of every process in the group, ended ones included
  int64_t oom_kills = 0;          // processes the kernel's OOM killer ended in the group (v2: or below)
};

inline constexpr int64_t kCpuPeriodMicros = 100'000;

Status CreateGroup(const CgroupGroup& group, const CgroupLimits& limits, bool parent_of_groups = false);
// v2: enables the limited controllers for the group's children; v1: nothing to do.
Status DelegateControllers(const CgroupGroup& group);
Status DelegateGroup(const CgroupGroup& group, uid_t uid, gid_t gid);
std::vector<std::string> ProcsFiles(const CgroupGroup& group);
// Every pid in the group and the groups below it.
std::vector<pid_t> ProcessesIn(const CgroupGroup& group);
int KillGroup(const CgroupGroup& group, int timeout_ms = 2000);
void RemoveGroup(const CgroupGroup& group);
void RemoveGroupIfUnused(const CgroupGroup& group);
int RemoveGroupsNamed(const std::vector<std::string>& dirs, const std::string& prefix);
CgroupUsage ReadUsage(const CgroupGroup& group);
int64_t CountOomKills(const CgroupGroup& group);

}  // namespace shoal
