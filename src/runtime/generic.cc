// The generic framework: any command, with Shoal's own variables only.
#include "runtime/frameworks.h"

namespace shoal {

EnvMap GenericFramework::TaskEnvironment(const JobSpec& spec, const ClusterView& cluster,
                                         const TaskEndpoint& self) const {
  return ShoalEnvironment(spec, cluster, self);
}

}  // namespace shoal
