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
inline std::string ServerInfoPath(const std::string& home) { return home + "/server.json"; }

}  // namespace shoal
