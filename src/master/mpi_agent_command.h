// `shoal mpi-agent HOST COMMAND...`: Open MPI's remote shell for MPI jobs (instead of ssh).
// mpirun calls it to start an orted on HOST, a task of the job; it hands the command to
// the AM (SHOAL_AM_ADDR), whose container for that task runs it, and waits until that
// task's program has ended, exiting with its code, as ssh would.
//
// RunMpiAgent is the whole exchange with the AM, for the command and for the in-process
// mini cluster's scripted mpirun (tests/cluster), which runs it on threads.
// Thread-safety: RunMpiAgent keeps no state; calls may run side by side.
#pragma once

#include <string>

namespace shoal {

struct MpiAgentCall {
  std::string am_addr;    // host:port (SHOAL_AM_ADDR)
  std::string mpi_token;  // the attempt's MPI token (kMpiTokenVariable)
  std::string host;       // the made-up host mpirun names ("shoal-task-<rank>")
  std::string command;    // the orted command line
};
// Hands the command to the AM and waits for that task's end: its exit code, or 1 with a
// line on stderr when the AM refused or could not be reached.
int RunMpiAgent(const MpiAgentCall& call);

int MpiAgentCommand(int argc, char** argv);

}  // namespace shoal
