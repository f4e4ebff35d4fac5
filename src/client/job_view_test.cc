#include "client/job_view.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

Json Detail(const std::string& state) {
  return Json{{"id", "job-3"},     {"name", "ddp"}, {"user", "ann"},    {"framework", "pytorch"},
              {"state", state},    {"message", state == "FAILED" ? "task worker[1] failed: exit code 1" : ""},
              {"progress", 0.5},   {"attempt", 1},  {"max_attempts", 1}, {"created_ms", 1},
              {"started_ms", 1000}, {"finished_ms", 4000}, {"version", 3},
              {"spec", {{"roles", {{{"name", "worker"}, {"instances", 2}}}}}},
              {"attempts",
               {{{"number", 1},
                 {"state", state},
                 {"dir", "/h/jobs/job-3/attempt-1"},
                 {"tasks",
                  {{{"role", "worker"}, {"index", 0}, {"state", "SUCCEEDED"}, {"progress", 1.0}, {"exit_code", 0}},
                   {{"role", "worker"}, {"index", 1}, {"state", "FAILED"}, {"progress", 0.0}, {"exit_code", 1},
                    {"message", "exit code 1: boom"}}}}}}}};
}

TEST(JobView, ProgressBar) {
  EXPECT_EQ(ProgressBar(0.5, 10), "[#####-----]  50%");
  EXPECT_EQ(ProgressBar(2.0, 4), "[####] 100%");
}

TEST(JobView, SummaryNamesTheFailedTaskAndTheLogs) {
  std::string summary = RenderSummary(Detail("FAILED"));
  EXPECT_NE(summary.find("job-3 (ddp) FAILED in 3.0s after 1 attempt"), std::string::npos) << summary;
  EXPECT_NE(summary.find("worker[1] failed: exit code 1"), std::string::npos);
  EXPECT_NE(summary.find("exit code 1: boom"), std::string::npos);
  EXPECT_NE(summary.find("/h/jobs/job-3/attempt-1"), std::string::npos);
}

TEST(JobView, StatusShowsHungTasks) {
  Json detail = Detail("RUNNING");
  Json& tasks = detail["attempts"][0]["tasks"];
  tasks[1]["state"] = "RUNNING";
  tasks[1]["hung"] = true;
  std::string status = RenderStatus(detail);
  EXPECT_NE(status.find("hung: worker[1] made no progress"), std::string::npos) << status;
  EXPECT_NE(status.find("shoal stack job-3"), std::string::npos) << status;
  EXPECT_NE(status.find("HUNG"), std::string::npos) << status;
  tasks[1]["hung"] = false;
  EXPECT_EQ(RenderStatus(detail).find("HUNG"), std::string::npos);
}

TEST(JobView, LiveViewPrintsChangesOnlyWhenNotATerminal) {
  char* buffer = nullptr;
  size_t size = 0;
  FILE* out = open_memstream(&buffer, &size);
  LiveView view(out, false);
  view.Update(Detail("RUNNING"));
  view.Update(Detail("RUNNING"));
  view.Update(Detail("SUCCEEDED"));
  fclose(out);
  std::string text(buffer, size);
  free(buffer);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 4) << text;
  EXPECT_NE(text.find("worker    [###############---------------]  50%  1 FAILED, 1 SUCCEEDED"), std::string::npos)
      << text;
}

}  // namespace
}  // namespace shoal
