// CaptureStacks: `shoal stack JOB` on the server side. The server asks the AM of the
// job's current attempt (at the address the AM reported) for every running task's
// stacks and returns them; the AM gathers them through the tasks' heartbeats and each
// task also appends its stacks to its own log. Nothing is stopped.
//
// Contract:
//  - A job that is not running is kFailedPrecondition ("... is SUCCEEDED: no process
//    is left"); an unknown job is kNotFound; an AM that does not answer is kUnavailable.
//  - The reply is {job, attempt, tasks: [{task, host, answered, text}]}.
// Thread-safety: safe from any thread; it blocks for up to a minute.
#pragma once

#include <string>

#include "common/json.h"
#include "common/status.h"
#include "server/job_manager.h"
#include "server/server_auth.h"

namespace shoal {

// The attempt's token (auth.AttemptToken) proves to the AM that its server asks.
Result<Json> CaptureStacks(JobManager& jobs, const std::string& id, const ServerAuth& auth);

}  // namespace shoal
