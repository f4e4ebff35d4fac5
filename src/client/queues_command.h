// `shoal queues`: the server's queues (queues.yaml in its home) with each one's
// guarantee, max, per-user limit, what it uses now, whether it borrows, and the jobs that
// wait in it; the file's reload error when the file on disk is not the one in force.
#pragma once

#include <CLI/CLI.hpp>

#include "client/client_context.h"
#include "common/json.h"

namespace shoal {

void AddQueuesCommand(CLI::App& app, ClientContext& ctx);
// The table `shoal queues` prints for GET /api/v1/queues's reply.
std::string RenderQueues(const Json& reply);

}  // namespace shoal
