#include "backend/admission.h"

namespace shoal {

std::vector<Admission> AdmitFifo(const std::vector<QueuedJob>& queue, FreeCapacity free) {
  std::vector<Admission> admitted;
  for (const QueuedJob& job : queue) {
    Resources total;
    for (const auto& task : job.tasks) total += task;
    if (!free.resources.Fits(total) || static_cast<int>(free.free_gpus.size()) < total.gpus) break;
    Admission admission{job.job_id, total, {}};
    for (const auto& task : job.tasks) {
      std::vector<int> gpus;
      for (int i = 0; i < task.gpus; ++i) {
        gpus.push_back(*free.free_gpus.begin());
        free.free_gpus.erase(free.free_gpus.begin());
      }
      admission.task_gpus.push_back(std::move(gpus));
    }
    free.resources -= total;
    admitted.push_back(std::move(admission));
  }
  return admitted;
}

}  // namespace shoal
