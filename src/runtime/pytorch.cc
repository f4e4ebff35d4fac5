// PyTorch: the variables torchrun sets, one process per task. The world is every task of
// every role in rank order; rank 0's reserved port is the rendezvous (MASTER_PORT).
#include "runtime/frameworks.h"

namespace shoal {

EnvMap PyTorchFramework::TaskEnvironment(const JobSpec& spec, const ClusterView& cluster,
                                         const TaskEndpoint& self) const {
  EnvMap env = ShoalEnvironment(spec, cluster, self);
  const TaskEndpoint& master = cluster.tasks.front();
  env["MASTER_ADDR"] = master.host;
  env["MASTER_PORT"] = std::to_string(master.ports.front());
  env["RANK"] = std::to_string(self.rank);
  env["WORLD_SIZE"] = std::to_string(cluster.tasks.size());
  env["LOCAL_RANK"] = "0";
  env["LOCAL_WORLD_SIZE"] = "1";
  env["GROUP_RANK"] = std::to_string(self.rank);
  env["ROLE_RANK"] = std::to_string(self.index);
  env["ROLE_WORLD_SIZE"] = std::to_string(cluster.CountRole(self.role));
  env["TORCHELASTIC_RESTART_COUNT"] = std::to_string(cluster.attempt - 1);
  env["TORCHELASTIC_MAX_RESTARTS"] = std::to_string(spec.max_attempts - 1);
  env["TORCHELASTIC_RUN_ID"] = cluster.job_id;
  return env;
}

}  // namespace shoal
