// Termination signals for Shoal's daemons (server, AM, container).
//
// Contract: BlockTerminationSignals() must run in main before any thread starts: it blocks
// SIGTERM, SIGINT and SIGUSR1 in every thread (children get a clean mask at exec) and
// ignores SIGPIPE. OnTermination(action) then starts a detached thread that runs `action`
// once, when the first SIGTERM or SIGINT arrives, so shutdown runs as ordinary code, not
// in a signal handler. OnWarning(action) does the same for the first SIGUSR1: a batch
// system's warning that it will end the process soon (Slurm's --signal); a process that
// asks for none ignores it.

#pragma once

#include <functional>

namespace shoal {

void BlockTerminationSignals();
void OnTermination(std::function<void()> action);
void OnWarning(std::function<void()> action);

}  // namespace shoal
