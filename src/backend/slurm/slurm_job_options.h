// The sbatch options of one attempt: the administrator's, and the job's own.
//
// Contract:
//  - The server's `--slurm-partition` and `--slurm-option`s are defaults. A job's own
//    option (its spec's `slurm:` section) replaces the default of the same name
//    (SlurmOptionName: -A and --account are one) and the others are added after them.
//    Their --time: the job's slurm.time, else the administrator's, else the job's
//    timeouts.job plus a minute (SlurmTimeOption), else none (the partition's limit).
//  - With a time limit, Shoal asks Slurm to warn the AM kSlurmWarningSeconds before it
//    (--signal=B:USR1@90: to the batch step alone, not to the tasks, which Slurm would
//    kill with it); the AM stops its tasks with the usual SIGTERM and grace and fails the
//    attempt naming the limit. A --signal among the administrator's options is dropped.
//  - `locked` names the fields the administrator keeps (`shoal server --slurm-lock
//    account`): a job that sets one is refused at submit (InvalidArgument naming the field
//    and the administrator's choice); "extra" locks every extra option.
// Thread-safety: pure functions.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "spec/job_spec.h"

namespace shoal {

// Slurm sends its --signal up to 60 s early, so the warning comes 90 to 150 s before the
// limit: time for the tasks' grace and for the AM's report.
inline constexpr int kSlurmWarningSeconds = 90;

struct SlurmDefaults {
  std::string partition;             // --slurm-partition ("": the cluster's default)
  std::vector<std::string> options;  // --slurm-option, as given
  std::set<std::string> locked;      // slurm: fields a job may not set
};

// The attempt's sbatch options: the administrator's, the job's own over them, a --time
// with Shoal's warning signal, and --nice=-priority for a priority below 0.
std::vector<std::string> AttemptSbatchOptions(const SlurmDefaults& defaults, const JobSpec& spec);
Status CheckSlurmLocks(const SlurmDefaults& defaults, const SlurmSection& section);
// The fields `--slurm-lock` takes.
const std::vector<std::string>& SlurmLockableFields();

}  // namespace shoal
