// mpirun's output as the AM reads it after a failed MPI attempt (master/mpi_launch.h):
// arbitrary bytes for any job shape. Nothing may crash or throw, and a rank it names must
// be a task of the job.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "master/mpi_launch.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shoal;
  if (size < 2) return 0;
  JobSpec spec;
  spec.roles.push_back(RoleSpec{.name = "worker", .instances = 1 + data[0] % 5, .command = "true"});
  spec.roles[0].nproc_per_node = 1 + data[1] % 4;
  std::string output(reinterpret_cast<const char*>(data + 2), size - 2);
  auto failed = FailedRankFromMpirunOutput(output, spec);
  if (failed && (failed->task_rank < 0 || failed->task_rank >= spec.TotalTasks())) std::abort();
  return 0;
}
