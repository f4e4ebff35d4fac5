// `shoal mpi-agent HOST COMMAND...`: Open MPI's remote shell for MPI jobs (instead of ssh).
// mpirun calls it to start an orted on HOST, a task of the job; it hands the command to
// the AM (SHOAL_AM_ADDR), whose container for that task runs it, and waits until that
// task's program has ended, exiting with its code, as ssh would.
#pragma once

namespace shoal {
int MpiAgentCommand(int argc, char** argv);
}
