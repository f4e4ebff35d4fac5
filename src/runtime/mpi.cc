// MPI: Open MPI's mpirun, run by the AM, starts the ranks through the containers
// (master/mpi_launch.h); the ranks read their places from MPI itself. The containers'
// environment (and so the ranks') carries Shoal's variables and what Open MPI needs to
// run as root.
#include "runtime/frameworks.h"

namespace shoal {

EnvMap MpiFramework::TaskEnvironment(const JobSpec& spec, const ClusterView& cluster, const TaskEndpoint& self) const {
  EnvMap env = ShoalEnvironment(spec, cluster, self);
  env["OMPI_ALLOW_RUN_AS_ROOT"] = "1";
  env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1";
  // orted shares its hwloc topology with the ranks through a shared-memory segment mapped
  // at an address it guesses; when the guess collides, orted dies of a segmentation
  // fault in hwloc_shmem_topology_write. Without the segment each rank reads the topology.
  env["OMPI_MCA_rtc_hwloc_vmhole"] = "none";
  return env;
}

}  // namespace shoal
