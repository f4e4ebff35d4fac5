#include "backend/slurm/slurm_preemption.h"

#include "backend/slurm/slurm_state.h"

namespace shoal {

std::string SlurmPreemptionReason(SlurmCommands& commands, const std::string& slurm_job_id) {
  if (slurm_job_id.empty()) return "";
  auto shown = commands.Run({"scontrol", "show", "job", slurm_job_id}, {}, 5'000);
  if (!shown.ok() || !shown->ok()) return "";
  auto jobs = ParseScontrolJobs(shown->out);
  if (!jobs.ok()) return "";
  for (const auto& [id, state] : *jobs) {
    if (state.preempted) return "Slurm preempted the job for another job";
  }
  return "";
}

}  // namespace shoal
