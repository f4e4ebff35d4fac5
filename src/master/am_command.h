// `shoal am`: the application master's process entry (started by a backend, not users).
// For the local backend it calls `start_agent_launcher` once, before it starts any
// thread, for what starts its `shoal container` agents: the composition root hands in a
// ForkServer's start (common/fork_server.h). Null, or no function: agents are exec'd.
#pragma once

#include <functional>
#include <memory>

#include "common/process.h"

namespace shoal {
int AmCommand(int argc, char** argv, const std::function<std::unique_ptr<ProcessLauncher>()>& start_agent_launcher);
}
