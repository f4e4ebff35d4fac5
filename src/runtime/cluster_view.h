// ClusterView: the description of one job attempt's tasks once every container has
// registered: who runs where, on which ports, with which rank. Framework adapters turn it
// into the variables each framework expects.
//
// Contract: tasks are ordered by the spec's role order, then index; `rank` is the position
// in that order (0 .. world size - 1). Every task has at least one port.
// Thread-safety: a value type.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/json.h"

namespace shoal {

struct TaskEndpoint {
  std::string role;
  int index = 0;
  int rank = 0;
  std::string host;
  std::vector<int> ports;
  std::vector<int> gpus;  // device indices given to this task
  int processes = 1;      // processes the task runs (nproc_per_node)
};

struct ClusterView {
  std::string job_id;
  int attempt = 1;
  std::string am_addr;  // host:port of the application master
  std::vector<TaskEndpoint> tasks;
  // Endpoints the AM serves for the job, by name (the Rabit tracker for XGBoost).
  std::map<std::string, std::string> services;

  const TaskEndpoint* Find(const std::string& role, int index) const;
  int CountRole(const std::string& role) const;
  // Processes of all tasks, and of the tasks ranked before `rank`.
  int TotalProcesses() const;
  int ProcessesBefore(int rank) const;
};

inline constexpr const char* kRabitTrackerService = "rabit_tracker";

}  // namespace shoal
