// The JOB argument every job command takes (status, logs, kill, wait, save-model, stack):
// `job-12` or just `12`; `kill` takes one or more. Anything else is refused while the
// command line is read (exit 2, naming the argument and the form), before any request: a
// path or a shell fragment never becomes part of a URL. The id is stored in its long form (12 becomes job-12).
// Thread-safety: called while the command line is built, on one thread.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace shoal {

CLI::Option* AddJobArgument(CLI::App& command, std::string& id);
// One or more job ids, each checked and stored as AddJobArgument's.
CLI::Option* AddJobArguments(CLI::App& command, std::vector<std::string>& ids);

}  // namespace shoal
