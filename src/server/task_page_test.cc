#include "server/task_page.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

protocol::TaskView Task(const std::string& role, int index, TaskState state, bool hung = false) {
  protocol::TaskView task;
  task.role = role;
  task.index = index;
  task.state = state;
  task.hung = hung;
  return task;
}

// A job of two attempts; the latest has 1 ps and 10,000 workers: 9,997 running, one hung,
// one failed, one pending.
protocol::JobDetail BigDetail() {
  std::vector<protocol::TaskView> tasks = {Task("ps", 0, TaskState::kRunning)};
  for (int i = 0; i < 10'000; ++i) {
    tasks.push_back(Task("worker", i, i == 17 ? TaskState::kFailed : i == 9'999 ? TaskState::kPending : TaskState::kRunning,
                         i == 4'242));
  }
  protocol::JobDetail detail;
  detail.attempts.resize(2);
  detail.attempts[0].number = 1;
  detail.attempts[0].state = AttemptState::kFailed;
  detail.attempts[0].tasks = tasks;
  detail.attempts[1].number = 2;
  detail.attempts[1].tasks = tasks;
  return detail;
}

std::vector<std::string> Names(const protocol::JobDetail& detail) {
  std::vector<std::string> names;
  for (const protocol::TaskView& t : detail.attempts.back().tasks) names.push_back(t.role + std::to_string(t.index));
  return names;
}

TEST(TaskPageTest, TheFirstPageHoldsTheFirstTasksAndTheSummaryCountsEveryTask) {
  protocol::JobDetail detail = BigDetail();
  Json added = PageTasks(detail, TaskPageQuery{.offset = 0, .limit = 100});
  EXPECT_EQ(detail.attempts.back().tasks.size(), 100u);
  EXPECT_EQ(Names(detail).front(), "ps0");
  EXPECT_EQ(Names(detail).back(), "worker98");
  EXPECT_TRUE(detail.attempts[0].tasks.empty()) << "an earlier attempt's tasks are left out";
  EXPECT_EQ(detail.attempts[0].state, AttemptState::kFailed);
  EXPECT_EQ(added["task_page"], (Json{{"offset", 0}, {"limit", 100}, {"matched", 10'001}, {"total", 10'001}}));
  EXPECT_EQ(added["task_summary"],
            Json::parse(R"([{"role": "ps", "tasks": 1, "states": [{"state": "RUNNING", "count": 1}]},
                            {"role": "worker", "tasks": 10000, "states": [{"state": "RUNNING", "count": 9997},
                             {"state": "FAILED", "count": 1}, {"state": "HUNG", "count": 1}, {"state": "PENDING", "count": 1}]}])"));
}

TEST(TaskPageTest, PagesWithinTheFilterByRoleAndShownState) {
  protocol::JobDetail last = BigDetail();
  Json added = PageTasks(last, TaskPageQuery{.offset = 9'900, .limit = 100, .role = "worker"});
  EXPECT_EQ(Names(last).front(), "worker9900");
  EXPECT_EQ(Names(last).back(), "worker9999");
  EXPECT_EQ(added["task_page"]["matched"], 10'000);

  protocol::JobDetail wrong = BigDetail();
  added = PageTasks(wrong, TaskPageQuery{.offset = 0, .limit = 100, .states = {"FAILED", "LOST", "HUNG"}});
  EXPECT_EQ(Names(wrong), (std::vector<std::string>{"worker17", "worker4242"}));
  EXPECT_EQ(added["task_page"]["matched"], 2);

  protocol::JobDetail running = BigDetail();
  added = PageTasks(running, TaskPageQuery{.offset = 0, .limit = 1000, .role = "worker", .states = {"RUNNING"}});
  EXPECT_EQ(added["task_page"]["matched"], 9'997) << "a hung task is not counted as running";

  protocol::JobDetail past = BigDetail();
  added = PageTasks(past, TaskPageQuery{.offset = 20'000, .limit = 100});
  EXPECT_TRUE(past.attempts.back().tasks.empty());
  EXPECT_EQ(added["task_page"]["matched"], 10'001);
}

TEST(TaskPageTest, AJobWithNoAttemptGetsAnEmptyPage) {
  protocol::JobDetail detail;
  Json added = PageTasks(detail, TaskPageQuery{});
  EXPECT_EQ(added["task_page"]["total"], 0);
  EXPECT_EQ(added["task_summary"], Json::array());
}

TEST(TaskPageTest, ReadsTaskStatesInAnyCaseAndRefusesOthers) {
  EXPECT_EQ(ParseTaskStates("failed,Lost,HUNG").value(), (std::vector<std::string>{"FAILED", "LOST", "HUNG"}));
  EXPECT_TRUE(ParseTaskStates("").value().empty());
  auto bad = ParseTaskStates("FAILED,broken");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("task_state 'BROKEN' is not a task state; use PENDING"), std::string::npos)
      << bad.status().ToString();
}

}  // namespace
}  // namespace shoal
