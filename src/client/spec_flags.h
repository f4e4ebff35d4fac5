// SpecFlags: the job spec's command-line flags. Every field of the spec can be set by a
// flag; named flags (--instances worker=4) are sugar for `--set roles.worker.instances=4`,
// and all of them are applied to the file's document before it is read, so flags win
// and are validated exactly like the file.
// Thread-safety: plain data.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "spec/spec_parser.h"

namespace shoal {

struct SpecFlags {
  std::string file;  // empty: the spec comes from flags alone
  std::string name, framework, workdir, max_attempts;
  std::string cluster, queue, priority, estimate;
  std::string heartbeat_timeout, register_timeout, job_timeout;
  std::vector<std::string> env;          // K=V
  std::vector<std::string> secret_env;   // K=V, masked wherever Shoal shows it
  std::vector<std::string> instances;    // ROLE=N
  std::vector<std::string> cpus;         // ROLE=N
  std::vector<std::string> memory;       // ROLE=SIZE
  std::vector<std::string> gpus;         // ROLE=N
  std::vector<std::string> command;      // ROLE=CMD
  std::vector<std::string> role_env;     // ROLE:K=V
  std::vector<std::string> set;          // PATH=VALUE
  // The spec's slurm section (docs/slurm.md): one sbatch option each.
  std::string slurm_partition, slurm_account, slurm_qos, slurm_time, slurm_constraint, slurm_reservation;
  std::vector<std::string> slurm_extra;  // --name[=value]

  void AddTo(CLI::App& app);
  // The overrides, in the order they apply; InvalidArgument for a malformed flag.
  // `typed`, when given, gets each override's path and the flag as typed, for errors
  // (ParseOptions::flag_names); secret values are left out of it.
  Result<std::vector<std::string>> Overrides(std::map<std::string, std::string>* typed = nullptr) const;
};

// The spec file's text: InvalidArgument naming it when it is missing, a folder, or
// larger than the parser takes (`shoal submit /dev/zero` ends at once).
Result<std::string> ReadSpecFile(const std::string& path);
// Reads the file (if any), applies the flags and parses; errors name file:line or flag.
Result<ParsedSpec> LoadSpec(const SpecFlags& flags);

}  // namespace shoal
