// Admission: which queued jobs start now. A pure function over plain data, so the
// policy is tested with tables and no processes.
//
// Contract:
//  - Gang admission: a job starts with all its tasks at once or not at all.
//  - Strict FIFO: jobs start in queue order; the first job that does not fit stops the
//    scan, so a large job is never starved by smaller ones behind it.
//  - GPUs are concrete devices: each admitted task gets `gpus` distinct device indices
//    from the free ones, lowest first.
// Thread-safety: pure function.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "spec/resources.h"

namespace shoal {

struct QueuedJob {
  std::string job_id;
  std::vector<Resources> tasks;  // one entry per task, in rank order
};

struct FreeCapacity {
  Resources resources;
  std::set<int> free_gpus;  // device indices
};

struct Admission {
  std::string job_id;
  Resources total;                           // what the job takes
  std::vector<std::vector<int>> task_gpus;   // per task, the devices it gets
};

std::vector<Admission> AdmitFifo(const std::vector<QueuedJob>& queue, FreeCapacity free);

}  // namespace shoal
