// Which token a command sends to the server.
//
// Contract:
//  - CallerToken(home): $SHOAL_TOKEN when set (a user's own token, from `shoal user add`),
//    else what <home>/token holds (the server's token, readable by its owner alone), else
//    "" (no token: reads on a loopback server only).
//  - ReadTokenFile(path): the file's first line without trailing blanks; "" when missing.
// Thread-safety: functions of the environment and the file system.
#pragma once

#include <string>

namespace shoal {

std::string ReadTokenFile(const std::string& path);
std::string CallerToken(const std::string& home);

}  // namespace shoal
