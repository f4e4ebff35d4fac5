// `shoal stack JOB`: where every running task of a job is waiting, taken without
// stopping anything (native stacks and Python stacks, via gdb in each container).
// Prints them per task; each task's log keeps a copy.
#pragma once

#include <CLI/CLI.hpp>

#include "client/client_context.h"

namespace shoal {

void AddStackCommand(CLI::App& app, ClientContext& ctx);

}  // namespace shoal
