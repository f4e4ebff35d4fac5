// Who may do what to a job: jobs belong to the user who submitted them.
//
// Contract:
//  - An administrator (the server's token, or a user marked admin) may do anything.
//  - The job's owner may do anything to it; another user may do nothing to it, and is
//    told whose job it is (PermissionDenied, 403).
//  - A caller with no token may only read, which the server allows on loopback alone
//    (ServerAuth::Requires refuses everything else before a route runs).
//  - SubmitterName: whom a new job belongs to. An administrator may submit on behalf of a
//    named user (the CLI sends its login name); anyone else submits as themselves.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>

#include "common/status.h"
#include "server/server_auth.h"

namespace shoal {

enum class JobAction { kRead, kChange };

Status CheckJobAccess(const std::optional<Caller>& caller, JobAction action, const std::string& job_id,
                      const std::string& owner);
std::string SubmitterName(const std::optional<Caller>& caller, const std::string& requested);

}  // namespace shoal
