// Typed reads of the REST API's job views for the CLI's commands: each GET's reply is
// decoded into protocol/job_views.h's types, the decoder the server's encoder pairs with.
//
// Contract: a reply that does not decode is FailedPrecondition, naming the field and saying
// that the server and this `shoal` differ; an HTTP error is returned as the client gave it.
// Thread-safety: stateless functions over the caller's client.
#pragma once

#include <string>

#include "common/http_client.h"
#include "protocol/job_views.h"

namespace shoal {

// GET /api/v1/jobs/ID; with wait_version > 0 the server answers once the job's version
// passed it, or after wait_ms. `raw` (when given) receives the reply as sent, for --json.
Result<protocol::JobDetail> FetchJob(const HttpJsonClient& server, const std::string& id, int64_t wait_version = 0,
                                     int wait_ms = 0, Json* raw = nullptr);
// GET /api/v1/jobs?QUERY.
Result<protocol::JobList> FetchJobs(const HttpJsonClient& server, const std::string& query, Json* raw = nullptr);

}  // namespace shoal
