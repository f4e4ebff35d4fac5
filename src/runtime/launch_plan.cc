#include "runtime/launch_plan.h"

namespace shoal {

protocol::LaunchPlan PlanLaunch(const JobSpec& spec, const FrameworkAdapter& framework, const ClusterView& cluster,
                                const TaskEndpoint& self, const LaunchContext& context) {
  const RoleSpec* role = spec.FindRole(self.role);
  protocol::LaunchPlan plan;
  plan.env = spec.env;
  if (role) {
    for (const auto& [k, v] : role->env) plan.env[k] = v;
    plan.command = role->command;
    if (const CheckpointSpec* checkpoint = spec.CheckpointOf(*role)) {
      plan.checkpoint = *checkpoint;
      plan.resume_round = context.resume_round;
    }
    if (const ImageSpec* image = spec.ImageOf(*role)) plan.image = *image;
  }
  for (const auto& [k, v] : framework.TaskEnvironment(spec, cluster, self)) plan.env[k] = v;
  plan.processes.clear();
  for (int local = 0; local < std::max(1, self.processes); ++local) {
    plan.processes.push_back(framework.ProcessEnvironment(cluster, self, local));
  }
  plan.workdir = spec.workdir;
  plan.heartbeat_ms = context.heartbeat_ms;
  if (context.runs_board) plan.board_command = spec.board.command;
  plan.mpi = framework.LaunchesWithMpirun();
  plan.files = spec.files;
  plan.archives = spec.archives;
  plan.inputs = context.inputs;
  plan.outputs = context.outputs;
  plan.mask = SecretValues(spec);
  plan.preemption_grace_ms = spec.preemption_grace_ms;
  return plan;
}

}  // namespace shoal
