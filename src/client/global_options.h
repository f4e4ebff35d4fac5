// GlobalOptions: the options every `shoal` command takes wherever they stand on the
// command line (`shoal --home DIR server`, `shoal list --home DIR`), read before the
// command is chosen, so the daemons' own flag parsers and CLI11's subcommands need not
// know them.
//
// Contract: SplitGlobalOptions removes every `--home DIR` and `--home=DIR` from argv (the
// last one wins) and returns the rest in order; argv[0] stays first. A `--home` without a
// value is left in place for the command's parser to refuse. Nothing after a lone `--`
// is read.
// Thread-safety: a pure function.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace shoal {

struct GlobalOptions {
  std::optional<std::string> home;
  std::vector<std::string> rest;  // argv without the global options
};

GlobalOptions SplitGlobalOptions(const std::vector<std::string>& argv);

}  // namespace shoal
