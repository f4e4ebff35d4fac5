#include "isolation/task_isolation.h"

#include <unistd.h>

#include <cstdio>

#include "common/process.h"
#include "common/units.h"
#include "isolation/cgroup_control.h"

namespace shoal {
namespace {

const char* kFix = "; fix: run the server as root, or in a cgroup delegated to its user (systemd's Delegate=yes)";

}  // namespace

std::string TaskIsolation::Describe() const {
  if (!enforced()) return "task limits are not enforced: " + not_enforced;
  return "memory, CPU and process limits of tasks are enforced with " + jobs.Describe();
}

TaskIsolation PrepareTaskIsolation(const std::string& name) {
  auto own = FindOwnCgroups();
  if (!own.ok()) return {{}, own.status().message() + kFix};
  CgroupGroup jobs = own->Child(name);
  if (own->version == 2 && !DelegateControllers(*own).ok()) {
    // The kernel delegates controllers only from a group without processes of its own.
    CgroupGroup leaf = own->Child(name + "-server");
    if (Status s = CreateGroup(leaf, {}); !s.ok()) return {{}, s.message() + kFix};
    if (!JoinCgroups(ProcsFiles(leaf))) {
      return {{}, "cannot move the server into " + leaf.Describe() + kFix};
    }
    if (Status s = DelegateControllers(*own); !s.ok()) {
      return {{}, s.message() + " (another process shares the server's cgroup)" + kFix};
    }
  }
  if (Status s = CreateGroup(jobs, {}, /*parent_of_groups=*/true); !s.ok()) return {{}, s.message() + kFix};
  return {jobs, ""};
}

std::string OutOfMemoryMessage(const std::string& role, int index, int64_t limit_bytes, int64_t peak_bytes) {
  static const char* kUnits[] = {"", "K", "M", "G", "T"};
  double peak = static_cast<double>(peak_bytes);
  int unit = 0;
  for (; peak >= 1024 && unit < 4; ++unit) peak /= 1024;
  char shown[32];
  std::snprintf(shown, sizeof shown, "%.1f%s", peak, kUnits[unit]);
  return role + "[" + std::to_string(index) + "] used more than its " + FormatMemory(limit_bytes) +
         " of memory (peak " + shown + ") and was killed by the kernel; raise roles." + role + ".memory";
}

CgroupGroup AttemptGroup(const CgroupGroup& jobs, const std::string& job_id, int attempt) {
  return jobs.Child(job_id + "." + std::to_string(attempt));
}

CgroupGroup TaskGroup(const CgroupGroup& attempt, const std::string& role, int index) {
  return attempt.Child(role + "-" + std::to_string(index));
}

}  // namespace shoal
