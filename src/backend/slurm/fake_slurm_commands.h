// FakeSlurmCommands: Slurm's commands answered from a table, for the Slurm backend's unit
// tests. Each answer is keyed by the command's first word (sbatch, squeue, scancel ...);
// every call is recorded; a command without an answer fails as if it were not installed.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "backend/slurm/slurm_commands.h"

namespace shoal {

class FakeSlurmCommands final : public SlurmCommands {
 public:
  std::map<std::string, std::function<CommandOutput(const std::vector<std::string>&)>> answers;
  std::vector<std::vector<std::string>> calls;

  Result<CommandOutput> Run(const std::vector<std::string>& argv, const std::map<std::string, std::string>&,
                            int) override {
    calls.push_back(argv);
    auto it = answers.find(argv.at(0));
    if (it == answers.end()) return CommandOutput{1, "", argv[0] + ": not faked"};
    return it->second(argv);
  }
  int CountCalls(const std::string& program) const {
    int n = 0;
    for (const auto& c : calls) n += c.at(0) == program;
    return n;
  }
};

}  // namespace shoal
