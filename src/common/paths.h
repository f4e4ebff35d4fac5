// Paths: where Shoal keeps its state on this machine.
//  - ShoalHome(): $SHOAL_HOME, else ~/.shoal. It holds the job history (shoal.db), the
//    running server's address (server.json), its log, and the jobs' logs (jobs/).
//  - CurrentUserName(): $USER, else the login name of this process's user, else its uid.
// Thread-safety: pure functions of the environment.
#pragma once

#include <string>

namespace shoal {

std::string ShoalHome();
std::string CurrentUserName();
// This machine's host name ("" if the kernel will not say).
std::string HostName();
// A short name for the server of `home` on `host_name`: the same across restarts, another
// for each host and home. It names the server's Slurm jobs and its cgroups.
std::string ServerId(const std::string& host_name, const std::string& home);
inline std::string ServerInfoPath(const std::string& home) { return home + "/server.json"; }
// An MPI task's Open MPI session base (OMPI_MCA_orte_tmpdir_base): the AM names this
// mkdtemp pattern, and the task's agent makes the folder, as the task's account, before
// the program starts and removes it at the task's end.
inline constexpr const char kMpiSessionBasePattern[] = "/tmp/shoal-mpi-XXXXXX";

}  // namespace shoal
