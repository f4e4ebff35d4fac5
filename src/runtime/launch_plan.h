// PlanLaunch: the one pure function that turns (spec, role, framework adapter, cluster
// view) into a task's launch plan (protocol/task_messages.h): its command, working
// folder, environment, per-process variables, files, archives, inputs and outputs.
//
// Environment precedence, lowest first (docs/environment.md; a later layer wins):
//   1. what the agent inherits (common/inherited_environment.h), added by the agent
//   2. the job's env
//   3. the role's env
//   4. Shoal's and the framework's variables (runtime/framework.h): SHOAL_*, RANK,
//      TF_CONFIG, DMLC_* ... and CUDA_VISIBLE_DEVICES
//   5. the per-process variables of nproc_per_node (LOCAL_RANK, SHOAL_LOCAL_RANK ...)
//   6. what only the agent knows, added by the agent: SHOAL_TASK_DIR, the inputs' and
//      outputs' folders (SHOAL_INPUT_*, SHOAL_OUTPUT_*), archives' prepends to PATH-like
//      variables
// Contract: `self` is a task of `cluster`, whose role is in `spec`. No I/O.
// Thread-safety: a pure function.
#pragma once

#include "common/json.h"
#include "protocol/task_messages.h"
#include "runtime/cluster_view.h"
#include "runtime/framework.h"
#include "spec/job_spec.h"

namespace shoal {

// What the AM knows of a task beyond the spec and the cluster.
struct LaunchContext {
  int heartbeat_ms = 1000;
  bool runs_board = false;        // the job's board runs beside this task
  Json inputs = Json::array();    // the task's shares (data/data_plan.h)
  Json outputs = Json::array();
  int resume_round = 0;           // the checkpoint round the attempt resumes from (data/checkpoints.h)
};

protocol::LaunchPlan PlanLaunch(const JobSpec& spec, const FrameworkAdapter& framework, const ClusterView& cluster,
                                const TaskEndpoint& self, const LaunchContext& context);

}  // namespace shoal
