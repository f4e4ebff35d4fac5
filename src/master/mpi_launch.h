// MpiLaunch: how the AM of an `mpi` job starts its ranks through Shoal's containers.
//
// The AM runs Open MPI's mpirun with a hostfile of made-up host names, one per task
// ("shoal-task-<rank>", slots = nproc_per_node), and with `shoal mpi-agent` as its remote
// shell (plm_rsh_agent). For each host mpirun asks the agent to run an orted there; the
// agent hands that command line to the AM, whose task's container runs it (in the
// foreground: --daemonize is dropped) as its program. orted then starts the ranks, which
// are thus children of the container: Shoal's resources, logs, heartbeats and kill apply.
// mpirun.log, in the attempt's folder, keeps mpirun's own lines (its verdict on a failed rank).
//
// Contract: the helpers here are pure; the AM does the I/O.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/process.h"
#include "spec/job_spec.h"

namespace shoal {

std::string MpiHostName(int rank);
std::optional<int> RankFromMpiHost(const std::string& host);
// "shoal-task-0 slots=2\n..." for every task of the job.
std::string MpiHostfile(const JobSpec& spec);
// What each rank's shell runs before the job's command: its stdout and stderr become its
// orted's (the shell is orted's child), which are the capture pipes of the task's
// container, so a rank's lines land in its own task's log (with its progress and metric
// lines), not in mpirun's. Should the redirection fail, the output still reaches mpirun.log.
inline constexpr const char* kRankOutputToTask = "command exec >>/proc/$PPID/fd/1 2>>/proc/$PPID/fd/2\n";
// mpirun's command line for the job.
std::vector<std::string> MpirunArgv(const JobSpec& spec, const std::string& hostfile, const std::string& shoal_executable);
// The orted command as the container runs it: in the foreground.
std::string ForegroundOrted(std::string command);

// The MPI rank whose end made mpirun end the job, as mpirun's output says: "process rank
// R with PID P on node H exited on signal S (Name)", or "Process name: [[J,1],R]" followed
// by "Exit code: C". `task_rank` is the Shoal task that ran it (the node H, or the task
// whose slots hold MPI rank R: mpirun fills each host's slots in turn). Only mpirun's own
// lines count: those a rank printed carry --tag-output's "[job,rank]<stream>:" prefix.
struct MpiRankFailure {
  int task_rank = 0;
  int mpi_rank = 0;
  ExitInfo exit{1, 0};      // how the rank ended, when mpirun said (else exit code 1)
  std::string description;  // "MPI rank 1 exited with code 3"
};
std::optional<MpiRankFailure> FailedRankFromMpirunOutput(const std::string& output, const JobSpec& spec);

}  // namespace shoal
