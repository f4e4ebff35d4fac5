// Scenarios across the server, the AMs and the agents, in one process (mini_cluster.h).
#include "tests/cluster/mini_cluster.h"

#include <gtest/gtest.h>

namespace shoal::testing {
namespace {

// One role per script, so each task runs its own.
std::string Workers(const std::vector<std::string>& scripts, int max_attempts = 1) {
  std::string yaml = "name: mini\nmax_attempts: " + std::to_string(max_attempts) + "\nroles:\n";
  for (size_t i = 0; i < scripts.size(); ++i) {
    yaml += "  w" + std::to_string(i) + ": {instances: 1, cpus: 1, memory: 64M, command: \"" + scripts[i] + "\"}\n";
  }
  return yaml;
}

std::map<std::string, Json> TasksOf(const Json& detail, int attempt = 0) {
  std::map<std::string, Json> tasks;
  const Json& attempts = detail["attempts"];
  if (!attempts.is_array() || attempts.empty() || attempt > static_cast<int>(attempts.size())) return tasks;
  const Json& chosen = attempt > 0 ? attempts[attempt - 1] : attempts.back();
  for (const Json& task : chosen["tasks"]) {
    tasks[task["role"].get<std::string>() + "[" + std::to_string(task["index"].get<int>()) + "]"] = task;
  }
  return tasks;
}

TEST(MiniCluster, AJobRunsThroughTheRealServerAmsAndAgents) {
  MiniCluster cluster("runs");
  std::string id = cluster.Submit(Workers({"print:hello sleep:20", "print:world sleep:20"})).value();
  Json detail = cluster.WaitForState(id, "SUCCEEDED");
  ASSERT_EQ(detail["state"], "SUCCEEDED") << detail.dump();
  auto tasks = TasksOf(detail);
  EXPECT_EQ(tasks["w0[0]"]["state"], "SUCCEEDED");
  EXPECT_EQ(tasks["w1[0]"]["state"], "SUCCEEDED");
  EXPECT_EQ(cluster.TaskLog(id, 1, "w0-0"), "hello\n") << "the agent captured the program's output";
  EXPECT_EQ(cluster.TaskLog(id, 1, "w1-0"), "world\n");
}

TEST(MiniCluster, AWorkerThatDiesMidShardFailsTheAttemptAndStopsTheOther) {
  MiniCluster cluster("dies");
  std::string id = cluster.Submit(Workers({"print:working hang", "print:working sleep:50 exit:3"}, 2)).value();
  Json detail = cluster.WaitFor(id, [](const Json& d) { return d["state"] == "FAILED"; }, 20'000);
  ASSERT_EQ(detail["state"], "FAILED") << detail.dump();
  ASSERT_EQ(detail["attempts"].size(), 2u) << "the failed attempt was retried once (max_attempts: 2)";
  for (int attempt : {1, 2}) {
    auto tasks = TasksOf(detail, attempt);
    EXPECT_EQ(tasks["w1[0]"]["state"], "FAILED");
    EXPECT_EQ(tasks["w1[0]"]["exit_code"], 3);
    EXPECT_EQ(tasks["w0[0]"]["state"], "KILLED") << "the healthy worker is stopped, not left running";
  }
  EXPECT_NE(detail["message"].get<std::string>().find("task w1[0] failed: exit code 3"), std::string::npos)
      << detail["message"];
}

TEST(MiniCluster, AJobSucceedsWhenTheServerRestartsOnAnotherPortWhileItRuns) {
  MiniCluster cluster("restart");
  std::string id = cluster.Submit(Workers({"sleep:1500"})).value();
  cluster.WaitFor(id, [](const Json& d) {
    auto tasks = TasksOf(d);
    return !tasks.empty() && tasks["w0[0]"]["state"] == "RUNNING";
  });
  std::string before = cluster.url();
  cluster.RestartServer();
  ASSERT_NE(cluster.url(), before);
  Json detail = cluster.WaitFor(id, [](const Json& d) { return d["state"] != "RUNNING"; }, 20'000);
  EXPECT_EQ(detail["state"], "SUCCEEDED") << detail.dump();
  EXPECT_EQ(detail["attempts"].size(), 1u) << "no attempt was wasted";
}

TEST(MiniCluster, AKillStopsEveryTaskAndEndsTheJobKilled) {
  MiniCluster cluster("kill");
  std::string id = cluster.Submit(Workers({"hang", "hang"})).value();
  cluster.WaitFor(id, [](const Json& d) {
    auto tasks = TasksOf(d);
    return tasks.size() == 2 && tasks["w0[0]"]["state"] == "RUNNING" && tasks["w1[0]"]["state"] == "RUNNING";
  });
  ASSERT_TRUE(cluster.jobs().Kill(id).ok());
  Json detail = cluster.WaitForState(id, "KILLED");
  ASSERT_EQ(detail["state"], "KILLED") << detail.dump();
  for (const auto& [name, task] : TasksOf(detail)) EXPECT_EQ(task["state"], "KILLED") << name;
}

}  // namespace
}  // namespace shoal::testing
