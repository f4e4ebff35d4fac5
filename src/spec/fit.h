// Fit: does a job fit the whole cluster at all? Checked before a job is accepted, so a
// job that could never start is refused instead of waiting in the queue forever.
//
// Contract: returns one issue per role whose single task is larger than the largest
// node, and one for the job when its total is larger than the cluster (jobs are admitted
// whole). No issues: the job can start once the cluster is free.
// Thread-safety: pure function.
#pragma once

#include <vector>

#include "spec/job_spec.h"
#include "spec/spec_issue.h"

namespace shoal {

struct ClusterCapacity {
  Resources total;     // the whole cluster
  Resources largest;   // the largest single node (the local backend has one)
};

std::vector<SpecIssue> CheckFits(const JobSpec& spec, const ClusterCapacity& capacity);

}  // namespace shoal
