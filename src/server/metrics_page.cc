#include "server/metrics_page.h"

namespace shoal {

std::string RenderMetrics(const JobMetrics& jobs, const RequestMetrics& requests) {
  std::string out;
  AppendFamilyHeader(out, "shoal_jobs", "gauge", "Jobs in the history, by state.");
  std::map<std::string, int64_t> by_state = {{"QUEUED", 0}, {"RUNNING", 0}, {"SUCCEEDED", 0}, {"FAILED", 0}, {"KILLED", 0}};
  for (const auto& [state, count] : jobs.jobs_by_state) by_state[state] = count;
  for (const auto& [state, count] : by_state) AppendGauge(out, "shoal_jobs", {{"state", state}}, static_cast<double>(count));

  AppendFamilyHeader(out, "shoal_tasks", "gauge", "Tasks of the running jobs' current attempts, by state.");
  for (const auto& [state, count] : jobs.tasks_by_state) {
    AppendGauge(out, "shoal_tasks", {{"state", state}}, static_cast<double>(count));
  }
  AppendFamilyHeader(out, "shoal_queue_length", "gauge", "Jobs waiting for resources.");
  AppendGauge(out, "shoal_queue_length", {}, static_cast<double>(jobs.queue_length));
  AppendFamilyHeader(out, "shoal_scheduler_passes_total", "counter", "Scheduler passes completed since the server started.");
  AppendGauge(out, "shoal_scheduler_passes_total", {}, static_cast<double>(jobs.scheduler_passes));

  AppendFamilyHeader(out, "shoal_heartbeat_rtt_seconds", "histogram",
                     "Containers' last heartbeat round trip to their AM, one observation per task per AM report.");
  AppendHistogram(out, "shoal_heartbeat_rtt_seconds", {}, jobs.heartbeat_rtt);

  AppendFamilyHeader(out, "shoal_api_request_duration_seconds", "histogram",
                     "Time to answer an HTTP request, by method and route.");
  for (const auto& [key, histogram] : requests.Families()) {
    AppendHistogram(out, "shoal_api_request_duration_seconds", {{"method", key.first}, {"route", key.second}}, histogram);
  }
  return out;
}

}  // namespace shoal
