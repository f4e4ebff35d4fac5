// Finding the Shoal server, or starting the embedded one.
//
// Contract:
//  - FindServer: $SHOAL_SERVER (a URL) wins; otherwise the server recorded in
//    <home>/server.json, if it answers its health check. NotFound when none is running;
//    a SHOAL_SERVER answered by a program that is not a Shoal server is InvalidArgument,
//    said as such (not "does not answer").
//  - EnsureServer: FindServer, or start `shoal server --port 0` in the background for
//    this home (one at a time: a lock file serialises concurrent starters) and wait until
//    it answers. The server outlives the CLI; `shoal server --stop` ends it.
// Thread-safety: functions of the file system and network; no shared state.
#pragma once

#include <string>

#include "common/status.h"

namespace shoal {

Result<std::string> FindServer(const std::string& home);
Result<std::string> EnsureServer(const std::string& home);

}  // namespace shoal
