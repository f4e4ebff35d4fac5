#include "runtime/framework.h"

namespace shoal {

EnvMap ShoalEnvironment(const JobSpec& spec, const ClusterView& cluster, const TaskEndpoint& self) {
  EnvMap env;
  env["SHOAL_JOB_ID"] = cluster.job_id;
  env["SHOAL_JOB_NAME"] = spec.name;
  env["SHOAL_ATTEMPT"] = std::to_string(cluster.attempt);
  env["SHOAL_ROLE"] = self.role;
  env["SHOAL_INDEX"] = std::to_string(self.index);
  env["SHOAL_RANK"] = std::to_string(self.rank);
  env["SHOAL_WORLD_SIZE"] = std::to_string(cluster.tasks.size());
  env["SHOAL_ROLE_SIZE"] = std::to_string(cluster.CountRole(self.role));
  env["SHOAL_AM_ADDR"] = cluster.am_addr;
  env["SHOAL_HOST"] = self.host;
  if (!self.ports.empty()) env["SHOAL_PORT"] = std::to_string(self.ports.front());
  std::string gpus;
  for (int gpu : self.gpus) gpus += (gpus.empty() ? "" : ",") + std::to_string(gpu);
  // An empty CUDA_VISIBLE_DEVICES hides every GPU from a task that asked for none.
  env["CUDA_VISIBLE_DEVICES"] = gpus;
  return env;
}

std::vector<SpecIssue> FrameworkAdapter::Validate(const JobSpec& spec) const {
  std::vector<SpecIssue> issues;
  if (RunsSeveralProcessesPerTask()) return issues;
  for (const auto& role : spec.roles) {
    if (role.nproc_per_node <= 1) continue;
    issues.push_back({"roles." + role.name + ".nproc_per_node",
                      name() + " runs one process per task, so nproc_per_node: " + std::to_string(role.nproc_per_node) +
                          " cannot be used (its cluster description has one place per task)",
                      "remove nproc_per_node and set instances: " + std::to_string(role.instances * role.nproc_per_node) +
                          " instead; only generic, pytorch and mpi jobs run several processes per task"});
  }
  return issues;
}

EnvMap FrameworkAdapter::ProcessEnvironment(const ClusterView& cluster, const TaskEndpoint& self, int local_rank) const {
  return {{"SHOAL_LOCAL_RANK", std::to_string(local_rank)}, {"SHOAL_LOCAL_WORLD_SIZE", std::to_string(self.processes)}};
}

}  // namespace shoal
