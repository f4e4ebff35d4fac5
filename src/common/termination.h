// Termination signals for Shoal's daemons (server, AM, container).
//
// Contract: BlockTerminationSignals() must run in main before any thread starts: it blocks
// SIGTERM, SIGINT, SIGUSR1 and SIGUSR2 in every thread (children get a clean mask at
// exec) and ignores SIGPIPE. OnTermination(action) then starts a detached thread that
// runs `action` once, when the first SIGTERM or SIGINT arrives, so shutdown runs as
// ordinary code, not in a signal handler. OnSignal(sig, action) does the same for the
// first `sig`; a blocked signal nobody waits for is ignored. On Slurm the AM reads
// SIGUSR1 as the time-limit warning, SIGUSR2 as Shoal's own kill and SIGTERM as Slurm
// ending the job (slurm_backend.h).

#pragma once

#include <functional>

namespace shoal {

void BlockTerminationSignals();
void OnTermination(std::function<void()> action);
void OnSignal(int sig, std::function<void()> action);

}  // namespace shoal
