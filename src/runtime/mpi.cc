// MPI: Open MPI's mpirun, run by the AM, starts the ranks through the containers
// (master/mpi_launch.h); the ranks read their places from MPI itself. The containers'
// environment (and so the ranks') carries Shoal's variables and what Open MPI needs to
// run as root, and tells ranks with less than a CPU each to yield while they wait.
#include "common/paths.h"
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
  // Tasks on one machine would share /tmp/ompi.<host>.<uid>/ and race creating the same
  // session folder ("mkdir: File exists"): each orted gets a base of its own. This names
  // only the pattern; the task's agent makes the folder with mkdtemp as the task's account
  // (container/container_agent.cc), since a name known in advance could be made first, in
  // the shared /tmp, by another account that would then own the folder Open MPI works in.
  env["OMPI_MCA_orte_tmpdir_base"] = std::string(kMpiSessionBasePattern);
  // Open MPI's ranks busy-poll while they wait; with less than a CPU per rank they take
  // the CPU from the rank they wait for (osu_allgather, 3 ranks of 0.5 CPU: minutes, not
  // seconds). mpirun yields on its own only when a host's slots are oversubscribed, which
  // Shoal's hostfile never is: tell the ranks to yield.
  if (const RoleSpec* role = spec.FindRole(self.role); role && role->resources.cpus < role->nproc_per_node) {
    env["OMPI_MCA_mpi_yield_when_idle"] = "1";
  }
  return env;
}

}  // namespace shoal
