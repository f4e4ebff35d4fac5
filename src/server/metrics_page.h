// GET /metrics: the server's numbers in Prometheus' text format (docs/metrics.md).
//
// Contract: RenderMetrics writes shoal_jobs{state} (every job state, 0 included),
// shoal_tasks{state}, shoal_queue_length, shoal_scheduler_passes_total,
// shoal_heartbeat_rtt_seconds (histogram) and
// shoal_api_request_duration_seconds{method,route} (histogram).
// Thread-safety: a pure function over snapshots.
#pragma once

#include <string>

#include "server/job_manager.h"
#include "server/request_metrics.h"

namespace shoal {

std::string RenderMetrics(const JobMetrics& jobs, const RequestMetrics& requests);

}  // namespace shoal
