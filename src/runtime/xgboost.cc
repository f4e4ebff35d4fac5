// XGBoost (Rabit): the AM serves the tracker (runtime/rabit_tracker.h); workers find it
// through DMLC_TRACKER_URI and DMLC_TRACKER_PORT, as dmlc-submit set them.
#include "runtime/frameworks.h"

namespace shoal {

EnvMap XgboostFramework::TaskEnvironment(const JobSpec& spec, const ClusterView& cluster,
                                         const TaskEndpoint& self) const {
  EnvMap env = ShoalEnvironment(spec, cluster, self);
  auto tracker = cluster.services.find(kRabitTrackerService);
  if (tracker != cluster.services.end()) {
    const std::string& address = tracker->second;
    size_t colon = address.rfind(':');
    env["DMLC_TRACKER_URI"] = address.substr(0, colon);
    env["DMLC_TRACKER_PORT"] = address.substr(colon + 1);
  }
  env["DMLC_TASK_ID"] = std::to_string(self.index);
  env["DMLC_NUM_WORKER"] = std::to_string(cluster.CountRole("worker"));
  env["DMLC_ROLE"] = "worker";
  return env;
}

}  // namespace shoal
