#include "runtime/cluster_view.h"

namespace shoal {

const TaskEndpoint* ClusterView::Find(const std::string& role, int index) const {
  for (const auto& task : tasks) {
    if (task.role == role && task.index == index) return &task;
  }
  return nullptr;
}

int ClusterView::CountRole(const std::string& role) const {
  int n = 0;
  for (const auto& task : tasks) n += task.role == role;
  return n;
}

}  // namespace shoal
