// The commands that look at and act on existing jobs: status, list, logs, kill, wait,
// and `server --stop`'s client side. Each is a thin adapter over the REST API.
#pragma once

#include <CLI/CLI.hpp>

#include "client/client_context.h"

namespace shoal {

void AddStatusCommand(CLI::App& app, ClientContext& ctx);
void AddListCommand(CLI::App& app, ClientContext& ctx);
void AddKillCommand(CLI::App& app, ClientContext& ctx);
void AddWaitCommand(CLI::App& app, ClientContext& ctx);
void AddLogsCommand(CLI::App& app, ClientContext& ctx);
// `shoal save-model JOB`: every task uploads its outputs now to <output>/saved-<time>/.
void AddSaveModelCommand(CLI::App& app, ClientContext& ctx);

}  // namespace shoal
