#include <gtest/gtest.h>

#include "server/histogram.h"
#include "server/metrics_page.h"
#include "server/request_metrics.h"

namespace shoal {
namespace {

TEST(Histogram, CountsCumulativelyAndRendersPrometheusText) {
  Histogram h({0.01, 0.1, 1});
  h.Observe(0.005);
  h.Observe(0.05);
  h.Observe(5);
  h.Observe(-1);  // ignored
  HistogramSnapshot s = h.Snapshot();
  EXPECT_EQ(s.counts, (std::vector<uint64_t>{1, 2, 2}));
  EXPECT_EQ(s.count, 3u);
  std::string out;
  AppendHistogram(out, "x_seconds", {{"route", "a\"b"}}, s);
  EXPECT_NE(out.find("x_seconds_bucket{route=\"a\\\"b\",le=\"0.1\"} 2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("x_seconds_bucket{route=\"a\\\"b\",le=\"+Inf\"} 3\n"), std::string::npos) << out;
  EXPECT_NE(out.find("x_seconds_count{route=\"a\\\"b\"} 3\n"), std::string::npos) << out;
}

TEST(RequestMetrics, LabelsRoutesNotPaths) {
  EXPECT_EQ(RouteLabel("/api/v1/jobs"), "/api/v1/jobs");
  EXPECT_EQ(RouteLabel("/api/v1/jobs/job-12"), "/api/v1/jobs/:id");
  EXPECT_EQ(RouteLabel("/api/v1/jobs/job-12/logs/search"), "/api/v1/jobs/:id/logs/search");
  EXPECT_EQ(RouteLabel("/api/v1/jobs/job-12/series"), "/api/v1/jobs/:id/series");
  EXPECT_EQ(RouteLabel("/internal/v1/jobs/job-3/attempts/2/report"), "/internal/v1/jobs/:id/attempts/:n/report");
  EXPECT_EQ(RouteLabel("/jobs/job-3"), "/ (page)");
  EXPECT_EQ(RouteLabel("/static/app.js"), "/static/:file");
  EXPECT_EQ(RouteLabel("/api/v1/jobs/job-1/<script>"), "other");
  EXPECT_EQ(RouteLabel("/wp-admin"), "other");
}

TEST(MetricsPage, ShowsJobsTasksQueueHeartbeatsAndRequests) {
  JobMetrics jobs;
  jobs.jobs_by_state = {{"RUNNING", 2}, {"SUCCEEDED", 100000}};
  jobs.tasks_by_state = {{"RUNNING", 4}};
  jobs.queue_length = 3;
  jobs.scheduler_passes = 17;
  Histogram rtt;
  rtt.Observe(0.002);
  jobs.heartbeat_rtt = rtt.Snapshot();
  RequestMetrics requests;
  requests.Observe("GET", "/api/v1/jobs", 0.004);
  std::string text = RenderMetrics(jobs, requests);
  for (const char* line : {"# TYPE shoal_jobs gauge\n", "shoal_jobs{state=\"SUCCEEDED\"} 100000\n", "shoal_jobs{state=\"FAILED\"} 0\n",
                           "shoal_tasks{state=\"RUNNING\"} 4\n", "shoal_queue_length 3\n",
                           "# TYPE shoal_scheduler_passes_total counter\n", "shoal_scheduler_passes_total 17\n",
                           "# TYPE shoal_heartbeat_rtt_seconds histogram\n", "shoal_heartbeat_rtt_seconds_count 1\n",
                           "shoal_api_request_duration_seconds_count{method=\"GET\",route=\"/api/v1/jobs\"} 1\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << "missing: " << line << "\n" << text;
  }
}

}  // namespace
}  // namespace shoal
