// SlurmCommands: every call Shoal makes to Slurm (sbatch, squeue, sacct, scancel, sinfo,
// scontrol, srun) goes through this one interface, argv in and output out, so unit tests
// check the generated options and the parsing against canned output without a cluster.
//
// Contract:
//  - Run executes argv (argv[0] looked up in PATH) with the current environment plus
//    `extra_env`, waits at most `timeout_ms`, and returns its exit code, stdout and
//    stderr. It is an error (Unavailable) only when the command could not run or timed out;
//    a non-zero exit is a normal result the caller judges.
// Thread-safety: RealSlurmCommands is stateless and safe from any thread.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace shoal {

struct CommandOutput {
  int exit_code = 0;
  std::string out;
  std::string err;
  bool ok() const { return exit_code == 0; }
  // stderr's text (or stdout's when stderr is empty), trimmed: what the command said.
  std::string Said() const;
};

class SlurmCommands {
 public:
  virtual ~SlurmCommands() = default;
  virtual Result<CommandOutput> Run(const std::vector<std::string>& argv,
                                    const std::map<std::string, std::string>& extra_env = {},
                                    int timeout_ms = 30'000) = 0;
};

class RealSlurmCommands final : public SlurmCommands {
 public:
  Result<CommandOutput> Run(const std::vector<std::string>& argv, const std::map<std::string, std::string>& extra_env,
                            int timeout_ms) override;
  static RealSlurmCommands& Instance();
};

}  // namespace shoal
