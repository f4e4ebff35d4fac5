// SlurmPreemptionProbe: whether Slurm has chosen a job for preemption, asked from inside
// the job (a task's agent that got SIGTERM from outside Shoal), so that the program is
// told it was a preemption and gets its preemption_grace (docs/slurm.md).
//
// Contract: runs `scontrol show job <id>` (at most 5 s) and returns Slurm's reason when
// the job has a PreemptTime, "" when it has none or Slurm could not be asked.
// Thread-safety: safe from any thread (RealSlurmCommands is stateless).
#pragma once

#include <string>

#include "backend/slurm/slurm_commands.h"

namespace shoal {

std::string SlurmPreemptionReason(SlurmCommands& commands, const std::string& slurm_job_id);

}  // namespace shoal
