// `shoal run` and `shoal submit`: validate a job spec completely (before anything
// starts), hand it to the server, and for `run` follow it to the end.
#pragma once

#include <CLI/CLI.hpp>

#include "client/client_context.h"
#include "client/spec_flags.h"

namespace shoal {

void AddRunCommand(CLI::App& app, ClientContext& ctx);
void AddSubmitCommand(CLI::App& app, ClientContext& ctx);

// Follows a job until it ends, drawing its progress; returns the exit code for its state.
// The first Ctrl-C kills the job (and keeps following until it has ended).
int FollowJob(const HttpJsonClient& server, const std::string& id, bool draw);

}  // namespace shoal
