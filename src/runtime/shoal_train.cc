// shoal-train: `shoal train` workers (src/train). Beside Shoal's own variables, each task
// gets SHOAL_TRAIN_MASTER (rank 0's host and reserved port: rank 0 serves the rendezvous
// store there, the others connect to it) and SHOAL_TRAIN_LOCAL_WORKERS (how many of the
// job's tasks share this task's host, so that the trainer shares the cores out).
#include "runtime/frameworks.h"

namespace shoal {

EnvMap ShoalTrainFramework::TaskEnvironment(const JobSpec& spec, const ClusterView& cluster,
                                            const TaskEndpoint& self) const {
  EnvMap env = ShoalEnvironment(spec, cluster, self);
  const TaskEndpoint& master = cluster.tasks.front();
  env["SHOAL_TRAIN_MASTER"] = master.host + ":" + std::to_string(master.ports.front());
  int local = 0;
  for (const auto& task : cluster.tasks) local += task.host == self.host ? 1 : 0;
  env["SHOAL_TRAIN_LOCAL_WORKERS"] = std::to_string(local);
  return env;
}

}  // namespace shoal
