#include "client/job_view.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <ctime>

#include "client/queues_command.h"

namespace shoal {
namespace {

protocol::JobDetail Detail(JobState state) {
  protocol::JobDetail d;
  d.summary = {.id = "job-3", .name = "ddp", .user = "ann", .framework = "pytorch", .state = state,
               .message = state == JobState::kFailed ? "task worker[1] failed: exit code 1" : "", .progress = 0.5,
               .attempt = 1, .max_attempts = 1, .created_ms = 1, .started_ms = 1000, .finished_ms = 4000};
  d.version = 3;
  d.spec.roles.push_back(RoleSpec{.name = "worker", .instances = 2});
  protocol::AttemptView attempt{.number = 1, .state = AttemptState::kRunning, .dir = "/h/jobs/job-3/attempt-1"};
  attempt.tasks.push_back({.role = "worker", .index = 0, .state = TaskState::kSucceeded, .progress = 1.0, .exit_code = 0});
  attempt.tasks.push_back({.role = "worker", .index = 1, .state = TaskState::kFailed, .progress = 0.0, .exit_code = 1,
                           .message = "exit code 1: boom"});
  d.attempts.push_back(attempt);
  return d;
}

// What the server sends is what the CLI renders: the detail goes through the protocol.
protocol::JobDetail OverTheWire(const protocol::JobDetail& detail) {
  return protocol::Decode<protocol::JobDetail>(protocol::Encode(detail)).value();
}

TEST(JobView, AQueuedJobSaysWhyItWaitsInStatusAndList) {
  protocol::JobDetail detail = Detail(JobState::kQueued);
  detail.attempts.clear();
  detail.summary.queue = "research";
  detail.summary.priority = kHighPriority;
  detail.summary.wait_reason = "needs 4 CPUs (1.5 free); 2nd in queue research, behind job-41";
  detail.summary.expected_start_ms = (static_cast<int64_t>(std::time(nullptr)) + 3600) * 1000;
  std::string status = RenderStatus(OverTheWire(detail), 0);
  EXPECT_NE(status.find("  queue research, priority high\n"), std::string::npos) << status;
  EXPECT_NE(status.find("  waiting: needs 4 CPUs (1.5 free); 2nd in queue research, behind job-41 (in about "),
            std::string::npos)
      << status;
  protocol::JobList list;
  list.jobs = {OverTheWire(detail).summary};
  list.total = 1;
  std::string listed = RenderList(list);
  EXPECT_NE(listed.find("research"), std::string::npos) << listed;
  EXPECT_NE(listed.find("\n  waiting: needs 4 CPUs"), std::string::npos) << listed;
  detail.summary.state = JobState::kRunning;
  EXPECT_EQ(RenderStatus(OverTheWire(detail), 0).find("waiting:"), std::string::npos) << "only a queued job waits";
}

TEST(JobView, PreemptedAttemptsAreNamedAndNotCountedAgainstMaxAttempts) {
  protocol::JobDetail detail = Detail(JobState::kRunning);
  EXPECT_NE(RenderStatus(OverTheWire(detail), 0).find(", attempt 1 of 1, submitted"), std::string::npos);
  protocol::AttemptView preempted = detail.attempts[0];
  preempted.state = AttemptState::kPreempted;
  detail.attempts.insert(detail.attempts.begin(), preempted);
  detail.attempts[1].number = 2;
  detail.summary.attempt = 2;
  std::string status = RenderStatus(OverTheWire(detail), 0);
  EXPECT_NE(status.find(", attempt 2 of 2 (1 preempted, not counted), submitted"), std::string::npos) << status;
}

TEST(JobView, QueuesTableMarksBorrowingAndShowsAReloadErrorAndQueuesNoLongerConfigured) {
  Json reply = Json::parse(R"({"queues": [
      {"name": "research", "guarantee": 0.4, "max": 0.8, "share": 0.5, "borrowing": true, "running": 2,
       "waiting": ["job-9"], "used": {"cpus": 4, "memory_bytes": 0, "gpus": 0},
       "user_limit": {"cpus": 8, "memory_bytes": 34359738368, "gpus": 2}},
      {"name": "default", "guarantee": 0.6, "max": 1, "share": 0, "borrowing": false, "running": 0, "waiting": [],
       "used": {"cpus": 0, "memory_bytes": 0, "gpus": 0}, "user_limit": {"cpus": 0, "memory_bytes": 0, "gpus": 0}}],
      "capacity": {"cpus": 8, "memory_bytes": 17179869184, "gpus": 0}, "max_wait_ms": 3600000,
      "unconfigured": [{"name": "gone", "used": {"cpus": 1.5, "memory_bytes": 0, "gpus": 0}, "running": 1,
                        "waiting": ["job-20", "job-21"]}],
      "file": "/h/queues.yaml", "error": "/h/queues.yaml:2: queues.a.max is below its guarantee"})");
  std::string table = RenderQueues(reply);
  EXPECT_NE(table.find("research     40%        80%    50%*    2        1        4 CPUs                   8 CPUs, 32G, 2 GPUs"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("default      60%        100%   0%      0        0        nothing                  none"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("not reloaded, the queues above stay in force: /h/queues.yaml:2"), std::string::npos) << table;
  EXPECT_NE(table.find("queue gone is no longer configured but holds jobs: 1 running (they run to their end, using "
                       "1.5 CPUs), waiting: job-20, job-21 (they start only if the queue is configured again: kill them and "
                       "submit them to a configured queue)\n"),
            std::string::npos)
      << table;
  EXPECT_EQ(table.find("Slurm"), std::string::npos) << table;
  EXPECT_EQ(table.find("service levels"), std::string::npos) << table;
}

TEST(JobView, QueuesTableShowsSlurmMappingsAndServiceLevels) {
  Json reply = Json::parse(R"({"queues": [
      {"name": "gpu", "guarantee": 0.5, "max": 1, "share": 0, "running": 0, "waiting": [],
       "slurm": {"partition": "a100", "qos": "high"}},
      {"name": "default", "guarantee": 0.5, "max": 1, "share": 0, "running": 0, "waiting": [], "slurm": {}}],
      "capacity": {"cpus": 8}, "max_wait_ms": 3600000, "max_wait_to_resume_ms": 259200000,
      "service_levels_gpu_hours": [0.1, 0.5, 2], "min_run_before_preemption_ms": 600000, "file": "/h/queues.yaml",
      "error": ""})");
  std::string table = RenderQueues(reply);
  EXPECT_NE(table.find("queue gpu runs on Slurm partition a100, QOS high\n"), std::string::npos) << table;
  EXPECT_EQ(table.find("queue default runs"), std::string::npos) << table;
  EXPECT_NE(table.find("least served jobs go first (service levels 0.1, 0.5, 2 GPU-hours)"), std::string::npos) << table;
  EXPECT_NE(table.find("a job waits at most max_wait 1h00m before it goes first, and one that has run "
                       "max_wait_to_resume 72h00m in all"),
            std::string::npos)
      << table;
}

TEST(JobView, ProgressBar) {
  EXPECT_EQ(ProgressBar(0.5, 10), "[#####-----]  50%");
  EXPECT_EQ(ProgressBar(2.0, 4), "[####] 100%");
}

TEST(JobView, SummaryNamesTheFailedTaskAndTheLogs) {
  std::string summary = RenderSummary(OverTheWire(Detail(JobState::kFailed)));
  EXPECT_NE(summary.find("job-3 (ddp) FAILED in 3.0s after 1 attempt"), std::string::npos) << summary;
  EXPECT_NE(summary.find("worker[1] failed: exit code 1"), std::string::npos);
  EXPECT_NE(summary.find("exit code 1: boom"), std::string::npos);
  EXPECT_NE(summary.find("/h/jobs/job-3/attempt-1"), std::string::npos);
}

TEST(JobView, TheSummaryOfAJobOfManyTasksCountsThemAndNamesTheOneThatFailed) {
  protocol::JobDetail detail = Detail(JobState::kFailed);
  auto& tasks = detail.attempts[0].tasks;
  tasks.clear();
  for (int i = 0; i < 1'000; ++i) {
    tasks.push_back({.role = "worker", .index = i, .rank = i, .state = TaskState::kSucceeded, .exit_code = 0});
  }
  tasks[417].state = TaskState::kFailed;
  tasks[417].exit_code = 2;
  tasks[417].message = "exit code 2";
  std::string summary = RenderSummary(OverTheWire(detail));
  EXPECT_NE(summary.find("    worker:  999 SUCCEEDED, 1 FAILED\n"), std::string::npos) << summary;
  EXPECT_NE(summary.find("worker[417]"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("worker[416]"), std::string::npos) << "a task that succeeded is only counted";
  EXPECT_NE(summary.find("/h/jobs/job-3/attempt-1"), std::string::npos) << summary;
  EXPECT_LT(std::count(summary.begin(), summary.end(), '\n'), 20) << summary;
}

TEST(JobView, StatusShowsHungTasks) {
  protocol::JobDetail detail = Detail(JobState::kRunning);
  auto& tasks = detail.attempts[0].tasks;
  tasks[1].state = TaskState::kRunning;
  tasks[1].hung = true;
  std::string status = RenderStatus(OverTheWire(detail));
  EXPECT_NE(status.find("hung: worker[1] made no progress"), std::string::npos) << status;
  EXPECT_NE(status.find("shoal stack job-3"), std::string::npos) << status;
  EXPECT_NE(status.find("HUNG"), std::string::npos) << status;
  tasks[1].hung = false;
  EXPECT_EQ(RenderStatus(OverTheWire(detail)).find("HUNG"), std::string::npos);
}

TEST(JobView, StatusShowsTheTasksOfTheChosenAttempt) {
  protocol::JobDetail detail = Detail(JobState::kRunning);
  protocol::AttemptView second{.number = 2, .state = AttemptState::kRunning, .dir = "/h/jobs/job-3/attempt-2"};
  second.tasks.push_back({.role = "worker", .index = 0, .state = TaskState::kRunning, .pid = 4242});
  detail.attempts.push_back(second);
  std::string latest = RenderStatus(OverTheWire(detail));
  EXPECT_NE(latest.find("4242"), std::string::npos) << latest;
  EXPECT_EQ(latest.find("exit code 1: boom"), std::string::npos) << latest;
  std::string first = RenderStatus(OverTheWire(detail), 1);
  EXPECT_NE(first.find("tasks of attempt 1"), std::string::npos) << first;
  EXPECT_NE(first.find("exit code 1: boom"), std::string::npos) << first;
  EXPECT_EQ(first.find("4242"), std::string::npos) << first;
  EXPECT_NE(first.find("logs: /h/jobs/job-3/attempt-1"), std::string::npos) << first;
}

TEST(JobView, LiveViewPrintsChangesOnlyWhenNotATerminal) {
  char* buffer = nullptr;
  size_t size = 0;
  FILE* out = open_memstream(&buffer, &size);
  LiveView view(out, false);
  view.Update(Detail(JobState::kRunning));
  view.Update(Detail(JobState::kRunning));
  view.Update(Detail(JobState::kSucceeded));
  fclose(out);
  std::string text(buffer, size);
  free(buffer);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 4) << text;
  EXPECT_NE(text.find("worker    [###############---------------]  50%  1 FAILED, 1 SUCCEEDED"), std::string::npos)
      << text;
}

TEST(JobView, ListShowsEveryJobAndSaysWhenThereAreMore) {
  protocol::JobList list{.total = 7, .limit = 1};
  list.jobs.push_back(Detail(JobState::kFailed).summary);
  std::string text = RenderList(protocol::Decode<protocol::JobList>(protocol::Encode(list)).value());
  EXPECT_NE(text.find("job-3"), std::string::npos) << text;
  EXPECT_NE(text.find("FAILED"), std::string::npos) << text;
  EXPECT_NE(text.find("(1 of 7 jobs; --limit and --offset page through them)"), std::string::npos) << text;
}

TEST(JobView, SavedModelsShowTheirUriOrWhyTheyFailed) {
  protocol::JobDetail detail = Detail(JobState::kRunning);
  detail.saved_models.push_back({.name = "20260101-000000", .state = SaveState::kSaved, .uri = "s3://b/m", .attempt = 1});
  detail.saved_models.push_back({.name = "20260101-000100", .state = SaveState::kFailed, .message = "disk full", .attempt = 1});
  std::string status = RenderStatus(OverTheWire(detail));
  EXPECT_NE(status.find("20260101-000000    saved     s3://b/m"), std::string::npos) << status;
  EXPECT_NE(status.find("20260101-000100    failed    disk full"), std::string::npos) << status;
}

TEST(JobView, StatusSummarisesManyTasksByRoleAndStateAndListsThemAllWhenAsked) {
  protocol::JobDetail detail = Detail(JobState::kRunning);
  auto& tasks = detail.attempts[0].tasks;
  tasks.clear();
  tasks.push_back({.role = "ps", .index = 0, .state = TaskState::kRunning});
  for (int i = 0; i < 10'000; ++i) tasks.push_back({.role = "worker", .index = i, .rank = i + 1, .state = TaskState::kRunning});
  tasks[5001].state = TaskState::kFailed;
  tasks[5001].exit_code = 3;
  tasks[5001].message = "exit code 3";
  tasks[10'000].state = TaskState::kPending;
  std::string summary = RenderStatus(OverTheWire(detail));
  EXPECT_NE(summary.find("tasks: 10,001, by role and state (`shoal status job-3 --tasks` lists every one)"),
            std::string::npos) << summary;
  EXPECT_NE(summary.find("    ps:      1 RUNNING\n"), std::string::npos) << summary;
  EXPECT_NE(summary.find("    worker:  9,998 RUNNING, 1 FAILED, 1 PENDING\n"), std::string::npos) << summary;
  EXPECT_NE(summary.find("failed, lost or hung:"), std::string::npos) << summary;
  EXPECT_NE(summary.find("worker[5000]  FAILED"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("worker[4999]"), std::string::npos) << "a running task is only counted";
  EXPECT_LT(std::count(summary.begin(), summary.end(), '\n'), 20);

  std::string every = RenderStatus(OverTheWire(detail), 0, true);
  EXPECT_NE(every.find("worker[4999]"), std::string::npos);
  EXPECT_EQ(every.find("by role and state"), std::string::npos);
  EXPECT_GT(std::count(every.begin(), every.end(), '\n'), 10'000);

  tasks.resize(kListedTasks);  // up to 20 tasks: each its own line, as before
  std::string few = RenderStatus(OverTheWire(detail));
  EXPECT_EQ(few.find("by role and state"), std::string::npos) << few;
  EXPECT_NE(few.find("worker[18]"), std::string::npos) << few;
}

}  // namespace
}  // namespace shoal
