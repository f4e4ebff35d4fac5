// Termination signals for Shoal's daemons (server, AM, container).
//
// Contract: BlockTerminationSignals() must run in main before any thread starts: it blocks
// SIGTERM and SIGINT in every thread (children get a clean mask at exec) and ignores
// SIGPIPE. OnTermination(action) then starts a detached thread that runs `action` once,
// when the first SIGTERM or SIGINT arrives, so shutdown runs as ordinary code, not in a
// signal handler.
#pragma once

#include <functional>

namespace shoal {

void BlockTerminationSignals();
void OnTermination(std::function<void()> action);

}  // namespace shoal
