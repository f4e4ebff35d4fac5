// TensorFlow: TF_CONFIG as TFConfigClusterResolver reads it, and XLearning's
// TF_CLUSTER_DEF, TF_ROLE and TF_INDEX for older scripts. The evaluator is left out of
// the cluster every task sees; it gets the others' cluster and its own task entry.
#include "runtime/frameworks.h"

namespace shoal {

EnvMap TensorFlowFramework::TaskEnvironment(const JobSpec& spec, const ClusterView& cluster,
                                            const TaskEndpoint& self) const {
  EnvMap env = ShoalEnvironment(spec, cluster, self);
  Json cluster_def = Json::object();
  for (const auto& task : cluster.tasks) {
    if (task.role == "evaluator") continue;
    cluster_def[task.role].push_back(task.host + ":" + std::to_string(task.ports.front()));
  }
  Json tf_config{{"cluster", cluster_def}, {"task", {{"type", self.role}, {"index", self.index}}}};
  env["TF_CONFIG"] = tf_config.dump();
  env["TF_CLUSTER_DEF"] = cluster_def.dump();
  env["TF_ROLE"] = self.role;
  env["TF_INDEX"] = std::to_string(self.index);
  return env;
}

}  // namespace shoal
