#include "runtime/cluster_view.h"

namespace shoal {

const TaskEndpoint* ClusterView::Find(const std::string& role, int index) const {
  for (const auto& task : tasks) {
    if (task.role == role && task.index == index) return &task;
  }
  return nullptr;
}

int ClusterView::TotalProcesses() const { return ProcessesBefore(static_cast<int>(tasks.size())); }

int ClusterView::ProcessesBefore(int rank) const {
  int n = 0;
  for (const auto& task : tasks) n += task.rank < rank ? task.processes : 0;
  return n;
}

int ClusterView::CountRole(const std::string& role) const {
  int n = 0;
  for (const auto& task : tasks) n += task.role == role;
  return n;
}

}  // namespace shoal
