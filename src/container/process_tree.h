// ProcessTree: the processes that make up a task's program, read from /proc. A program
// is the processes Shoal started plus everything they started: their descendants and
// the members of their process groups (a daemonized grandchild stays in the group).
//
// Contract:
//  - ReadProcessTable() is one pass over /proc; processes that vanish meanwhile are
//    skipped. TreeOf() returns each process of the tree once, roots first.
//  - ReadProcessTableBelow(ancestor) reads only the ancestor and its descendants, from
//    each one's /proc/PID/task/TID/children, so its cost follows the task's processes,
//    not the host's (an agent of a 1,000-task job would otherwise read 3,000 processes'
//    files at every look); where the kernel has no children files it is
//    ReadProcessTable(). A descendant whose children file cannot be read (a non-dumpable
//    process of another identity) is in the table, but the walk does not go below it.
//    An agent is its programs' child subreaper (container/orphans.h), so every process of
//    their trees and groups is below it.
//  - ProcessCommand() is the command line with spaces between arguments ("" when gone).
// Thread-safety: pure functions over a snapshot; safe from any thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace shoal {

struct ProcessStat {
  pid_t pid = 0;
  pid_t ppid = 0;
  pid_t pgid = 0;
  int64_t ticks = 0;  // utime + stime
  int64_t rss_pages = 0;
};

std::vector<ProcessStat> ReadProcessTable();
std::vector<ProcessStat> ReadProcessTableBelow(pid_t ancestor);

std::vector<const ProcessStat*> TreeOf(const std::vector<ProcessStat>& table, const std::vector<pid_t>& roots);

std::string ProcessCommand(pid_t pid);

}  // namespace shoal
