// Which of the server's requests wait in the connection gate instead of a worker: a
// job's long poll, GET /api/v1/jobs/<id>?wait_version=V&wait_ms=M (the CLI's `status
// --watch`, `logs -f` and the web UI all use it). It is parked until the job has a
// version newer than V, is no longer live, or M ms (at most 60 s) have passed; then its
// handler runs with wait_ms already served, so it answers at once. Anything else is
// dispatched at once.
//
// Contract: the rule and its ready() predicates only read JobManager::HasNewerThan; the
// server calls WakeParked() from the JobManager's change listener. Access is checked when
// the request is dispatched, as for any request, so parking reveals nothing.
#pragma once

#include "common/connection_gate.h"
#include "server/job_manager.h"

namespace shoal {

ParkingRule ParkJobWaits(JobManager& jobs);

}  // namespace shoal
