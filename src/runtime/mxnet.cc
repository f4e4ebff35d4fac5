// MXNet (ps-lite): every task finds the scheduler through DMLC_PS_ROOT_URI and
// DMLC_PS_ROOT_PORT (the scheduler task's reserved port, which it binds).
#include "runtime/frameworks.h"

namespace shoal {

EnvMap MxNetFramework::TaskEnvironment(const JobSpec& spec, const ClusterView& cluster, const TaskEndpoint& self) const {
  EnvMap env = ShoalEnvironment(spec, cluster, self);
  const TaskEndpoint* scheduler = cluster.Find("scheduler", 0);
  env["DMLC_ROLE"] = self.role;
  env["DMLC_PS_ROOT_URI"] = scheduler->host;
  env["DMLC_PS_ROOT_PORT"] = std::to_string(scheduler->ports.front());
  env["DMLC_NUM_SERVER"] = std::to_string(cluster.CountRole("server"));
  env["DMLC_NUM_WORKER"] = std::to_string(cluster.CountRole("worker"));
  env["DMLC_NODE_HOST"] = self.host;
  return env;
}

}  // namespace shoal
