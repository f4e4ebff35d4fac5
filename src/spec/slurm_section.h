// SlurmSection: a job's own Slurm options (the spec's `slurm:` section), and the checks
// that keep them from breaking the batch script Shoal writes.
//
// Contract:
//  - Each field maps to one sbatch option: partition -> --partition, account -> --account,
//    qos -> --qos, constraint -> --constraint, reservation -> --reservation, time ->
//    --time in whole minutes (rounded up); `extra` are more sbatch options, each one
//    "--name" or "--name=value".
//  - CheckSlurmSection refuses, naming the field: a value with a character outside
//    printable ASCII or with whitespace (each becomes one `#SBATCH` line, so a newline
//    would write a command into the script), an extra that is not a long option, and an
//    extra that Shoal sets itself (job name, comment, output files, uid, signal, nodes and
//    resources of the job's components, ...; the message names the spec field to use).
//  - SlurmOptionName("--account=ml") is "--account"; a short form (-A ml, -p x, -q q,
//    -t 10, -C f) reads as its long name.
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/json.h"
#include "spec/spec_issue.h"

namespace shoal {

struct SlurmSection {
  std::string partition;
  std::string account;
  std::string qos;
  std::string constraint;
  std::string reservation;
  int64_t time_ms = 0;  // 0: none (the server derives one from timeouts.job)
  std::vector<std::string> extra;

  bool empty() const;
  // (spec field, sbatch option) for every field set, in the order above; extras last,
  // each under the field "slurm.extra[i]".
  std::vector<std::pair<std::string, std::string>> Options() const;
};

std::vector<SpecIssue> CheckSlurmSection(const SlurmSection& section);
// The section as stored with the job ({partition, ..., time_ms, extra}; fields unset left out).
Json SlurmSectionJson(const SlurmSection& section);
SlurmSection SlurmSectionFromJson(const Json& json);
std::string SlurmOptionName(const std::string& option);

}  // namespace shoal
