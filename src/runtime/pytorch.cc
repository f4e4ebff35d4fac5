// PyTorch: the variables torchrun sets. The world is every process of every task, tasks in
// rank order, each task's nproc_per_node processes in local-rank order; a task is a
// torchrun "node" (GROUP_RANK). Rank 0's reserved port is the rendezvous (MASTER_PORT).
#include "runtime/frameworks.h"

namespace shoal {

EnvMap PyTorchFramework::TaskEnvironment(const JobSpec& spec, const ClusterView& cluster,
                                         const TaskEndpoint& self) const {
  EnvMap env = ShoalEnvironment(spec, cluster, self);
  const TaskEndpoint& master = cluster.tasks.front();
  env["MASTER_ADDR"] = master.host;
  env["MASTER_PORT"] = std::to_string(master.ports.front());
  for (const auto& [key, value] : ProcessEnvironment(cluster, self, 0)) env[key] = value;
  env["GROUP_RANK"] = std::to_string(self.rank);
  env["ROLE_RANK"] = std::to_string(self.index);
  env["ROLE_WORLD_SIZE"] = std::to_string(cluster.CountRole(self.role));
  env["TORCHELASTIC_RESTART_COUNT"] = std::to_string(cluster.attempt - 1);
  env["TORCHELASTIC_MAX_RESTARTS"] = std::to_string(spec.max_attempts - 1);
  env["TORCHELASTIC_RUN_ID"] = cluster.job_id;
  return env;
}

EnvMap PyTorchFramework::ProcessEnvironment(const ClusterView& cluster, const TaskEndpoint& self, int local_rank) const {
  EnvMap env = FrameworkAdapter::ProcessEnvironment(cluster, self, local_rank);
  env["RANK"] = std::to_string(cluster.ProcessesBefore(self.rank) + local_rank);
  env["WORLD_SIZE"] = std::to_string(cluster.TotalProcesses());
  env["LOCAL_RANK"] = std::to_string(local_rank);
  env["LOCAL_WORLD_SIZE"] = std::to_string(self.processes);
  return env;
}

}  // namespace shoal
