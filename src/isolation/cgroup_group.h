// CgroupGroup: where one control group lives, in either layout of the kernel's cgroups.
//
// Contract:
//  - Version 2 (the unified hierarchy of an ordinary Debian 12 host): one directory holds
//    every controller's files. Version 1 (separate hierarchies, one mount per controller,
//    as on hosts that boot with systemd.unified_cgroup_hierarchy=0): one directory per
//    controller, possibly shared by co-mounted controllers ("cpu,cpuacct").
//  - FindCgroups reads /proc/self/mountinfo and /proc/self/cgroup as text, so tests hand
//    it any layout; the directories it names are those of the calling process's own
//    groups. Version 2 is chosen when the unified mount has controllers enabled (the
//    memory controller at least); otherwise version 1 when a memory hierarchy is mounted.
//    A hybrid host whose cgroup2 mount holds no controllers (only hugetlb, say) is v1.
//  - `root` prefixes every path (a fake root in tests; "" on a real host).
//  - Encode/Decode carry a group across a command line (server -> AM) unchanged.
// Thread-safety: plain values.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace shoal {

// The controllers Shoal limits with; v1 also uses freezer (to kill without races) and cpuacct.
inline constexpr const char* kLimitedControllers[] = {"memory", "cpu", "pids"};

struct CgroupGroup {
  int version = 0;                          // 1 or 2; 0: no group
  std::map<std::string, std::string> dirs;  // controller -> directory (v2: every controller, one directory)

  bool empty() const { return version == 0 || dirs.empty(); }
  // The distinct directories, each once (co-mounted v1 controllers share one).
  std::vector<std::string> Directories() const;
  // The directory of `controller`, or "" when this group has no such controller.
  std::string Dir(const std::string& controller) const;
  // A group below this one, in every hierarchy.
  CgroupGroup Child(const std::string& name) const;
  std::string Encode() const;  // "v1:memory=/sys/fs/cgroup/memory/a;pids=/sys/fs/cgroup/pids/a"
  static Result<CgroupGroup> Decode(const std::string& text);
  // "cgroup v1 (memory, cpu, pids, freezer) at /sys/fs/cgroup/memory/shoal-1234, ...", for logs.
  std::string Describe() const;
};

// The calling process's own groups, from the text of /proc/self/mountinfo and
// /proc/self/cgroup; FailedPrecondition names what is missing when no usable layout is found.
Result<CgroupGroup> FindCgroups(const std::string& mountinfo, const std::string& proc_cgroup,
                                const std::string& root = "");
// The same, read from this process's /proc.
Result<CgroupGroup> FindOwnCgroups();

// The calling process's own directory in every cgroup hierarchy mounted, whatever it holds
// (devices, blkio, a named one such as name=systemd, a hybrid host's unified mount): where
// a container runtime that a task runs as root makes the groups Shoal does not
// (isolation/oci_bundle.h). On a v2 host, the one unified directory.
std::vector<std::string> OwnHierarchyDirectories(const std::string& mountinfo, const std::string& proc_cgroup,
                                                 const std::string& root = "");

}  // namespace shoal
