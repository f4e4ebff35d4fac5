// What Slurm's commands print, as the Slurm backend reads it: squeue's, sacct's and
// sinfo's JSON, `scontrol show job` text, sinfo's node states, sbatch's job id, GRES
// strings, SLURM_TASKS_PER_NODE, node lists, srun's task-end lines and the batch
// script's node addresses. The first byte picks the reader; the rest is the
// output. Nothing may crash, throw, hang or allocate without bound, and what a reader
// returns must be put into words as `shoal status` does.
#include <cstddef>
#include <cstdint>
#include <string>

#include "backend/slurm/role_step.h"
#include "backend/slurm/slurm_job.h"
#include "backend/slurm/slurm_state.h"

namespace {

void Describe(const shoal::Result<std::map<std::string, shoal::SlurmJobState>>& jobs) {
  if (!jobs.ok()) return;
  for (const auto& [id, job] : *jobs) {
    (void)shoal::IsFinalSlurmState(job.state);
    (void)shoal::DescribeWaiting(job);
    if (shoal::IsClusterFailure(job.state)) (void)shoal::DescribeClusterEnd(job, {id});
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shoal;
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 11) {
    case 0: Describe(ParseSqueueJson(text)); break;
    case 1: Describe(ParseSacctJson(text)); break;
    case 2: Describe(ParseScontrolJobs(text)); break;
    case 3:
      if (auto nodes = ParseSinfoJson(text); nodes.ok()) {
        (void)CapacityOf(*nodes);
        (void)UsableNodeCount(*nodes);
      }
      break;
    case 4: (void)UnhealthyNodes(text); break;
    case 5: (void)ParseSbatchJobId(text); break;
    case 6: (void)GpusInGres(text); break;
    case 7: (void)ParseTasksPerNode(text); break;
    case 8: (void)ExpandNodeList(text); break;
    case 9:
      for (const auto& [task, end] : ParseSrunTaskEnds(text)) (void)end.Describe();
      break;
    case 10: (void)NodeAddresses(ParseNodeAddresses(text)); break;
  }
  return 0;
}
