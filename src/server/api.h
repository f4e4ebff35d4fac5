// The REST API: JSON over HTTP, the one interface of the CLI, the web UI and the tests.
// docs/api.md documents every route. Handlers are adapters: they read parameters,
// call the JobManager, and turn Status into 4xx/5xx replies; no handler can crash the
// server (RouteJson catches malformed values). Routes that touch a job check that the
// caller may (server/job_access.h); the spec they show has its secrets masked.
// Thread-safety: handlers run on the server's thread pool; the JobManager is thread-safe.
#pragma once

#include <httplib.h>

#include <functional>

#include "server/job_manager.h"
#include "server/request_metrics.h"
#include "server/server_auth.h"

namespace shoal {

struct ApiContext {
  JobManager& jobs;
  const ServerAuth& auth;  // who calls: jobs belong to their submitters (server/job_access.h)
  RequestMetrics& requests;  // shown by GET /metrics
  std::string backend_name;
  std::function<void()> shutdown;  // asks the server to stop
};

void InstallApi(httplib::Server& http, ApiContext context);

}  // namespace shoal
