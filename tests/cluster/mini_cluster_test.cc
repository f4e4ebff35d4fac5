// Scenarios across the server, the AMs and the agents, in one process (mini_cluster.h).
#include "tests/cluster/mini_cluster.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <future>

#include "protocol/task_messages.h"

namespace shoal::testing {
namespace {

// One role per script, so each task runs its own.
std::string Workers(const std::vector<std::string>& scripts, int max_attempts = 1, const std::string& extra = "") {
  std::string yaml = "name: mini\nmax_attempts: " + std::to_string(max_attempts) + "\n" + extra + "roles:\n";
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

bool Running(const Json& detail, const std::string& task) {
  auto tasks = TasksOf(detail);
  return tasks.count(task) && tasks[task]["state"] == "RUNNING";
}

TEST(MiniCluster, TheAmRefusesATasksMessageWithoutThatTasksToken) {
  MiniCluster cluster("forged");
  std::string id = cluster.Submit(Workers({"print:up sleep:3000"})).value();
  Json running = cluster.WaitFor(id, [](const Json& d) { return Running(d, "w0[0]"); });
  const std::string am_addr = running["attempts"].back()["am_addr"].get<std::string>();
  ASSERT_FALSE(am_addr.empty()) << running.dump();
  // Anyone on the host can reach the AM's port: a forged exit would fail the job.
  Json forged = protocol::Encode(protocol::ExitRequest{{"w0", 0}, ExitInfo{1, 0}, "forged"});
  HttpJsonClient anyone("http://" + am_addr);
  for (const std::string& token : {std::string(), std::string("not-the-task-token")}) {
    if (!token.empty()) anyone.set_bearer_token(token);
    auto refused = anyone.Post(protocol::kExitedPath, forged);
    ASSERT_FALSE(refused.ok()) << "token '" << token << "'";
    EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied) << refused.status().ToString();
    EXPECT_NE(refused.status().message().find("must carry that task's token"), std::string::npos)
        << refused.status().message();
  }
  Json detail = cluster.WaitFor(id, [](const Json& d) { return d["state"] != "RUNNING"; });
  EXPECT_EQ(detail["state"], "SUCCEEDED") << detail.dump();
  EXPECT_EQ(TasksOf(detail)["w0[0]"]["exit_code"], 0);
}

TEST(MiniCluster, AHeartbeatLostForLessThanTheTimeoutLeavesTheTaskRunning) {
  MiniCluster cluster("brief-partition");
  std::string id = cluster.Submit(Workers({"print:up sleep:8000"}, 1, "timeouts: {heartbeat: 3s}\n")).value();
  ASSERT_TRUE(Running(cluster.WaitFor(id, [](const Json& d) { return Running(d, "w0[0]"); }), "w0[0]"));
  cluster.CutAgent("w0[0]");
  cluster.Pass(2'000);  // 20 heartbeats lost, less than timeouts.heartbeat
  Json during = cluster.jobs().Get(id, 0, 0).value();
  EXPECT_EQ(TasksOf(during)["w0[0]"]["state"], "RUNNING") << during.dump();
  cluster.HealAgent("w0[0]");
  Json detail = cluster.WaitFor(id, [](const Json& d) { return d["state"] != "RUNNING"; });
  EXPECT_EQ(detail["state"], "SUCCEEDED") << detail.dump();
  EXPECT_EQ(detail["attempts"].size(), 1u);
  EXPECT_EQ(TasksOf(detail)["w0[0]"]["state"], "SUCCEEDED");
}

TEST(MiniCluster, AHeartbeatLostPastTheTimeoutLosesTheTaskAndStopsItsProgram) {
  MiniCluster cluster("partition");
  std::string id = cluster.Submit(Workers({"print:up hang", "print:up hang"}, 1, "timeouts: {heartbeat: 3s}\n")).value();
  cluster.WaitFor(id, [](const Json& d) { return Running(d, "w0[0]") && Running(d, "w1[0]"); });
  ASSERT_EQ(cluster.programs().Running(), 2);
  cluster.CutAgent("w0[0]");
  Json detail = cluster.WaitFor(id, [](const Json& d) { return d["state"] != "RUNNING"; });
  ASSERT_EQ(detail["state"], "FAILED") << detail.dump();
  auto tasks = TasksOf(detail);
  EXPECT_EQ(tasks["w0[0]"]["state"], "LOST");
  EXPECT_NE(tasks["w0[0]"]["message"].get<std::string>().find("no heartbeat for"), std::string::npos) << tasks["w0[0]"];
  EXPECT_EQ(tasks["w1[0]"]["state"], "KILLED") << "the healthy task kept beating and was stopped with the attempt";
  EXPECT_NE(detail["message"].get<std::string>().find("task w0[0] was lost"), std::string::npos) << detail["message"];
  // The link comes back: nothing the late agent says turns the lost task around.
  cluster.HealAgent("w0[0]");
  cluster.Pass(5'000);
  Json after = cluster.jobs().Get(id, 0, 0).value();
  EXPECT_EQ(TasksOf(after)["w0[0]"]["state"], "LOST") << after.dump();
  EXPECT_EQ(cluster.programs().Running(), 0) << "the lost task's program was stopped, not left running";
}

TEST(MiniCluster, AnAmKilledMidRunLosesItsTasksAndTheNextAttemptRunsThem) {
  MiniCluster cluster("am-dies");
  std::string id = cluster.Submit(Workers({"print:up only-attempt:1 hang"}, 2)).value();
  cluster.WaitFor(id, [](const Json& d) { return Running(d, "w0[0]"); });
  cluster.AbandonAm(id, 1);
  Json detail = cluster.WaitFor(id, [](const Json& d) { return d["state"] != "RUNNING"; });
  ASSERT_EQ(detail["state"], "SUCCEEDED") << detail.dump();
  ASSERT_EQ(detail["attempts"].size(), 2u);
  const Json& first = detail["attempts"][0];
  EXPECT_EQ(first["state"], "FAILED");
  EXPECT_NE(first["message"].get<std::string>().find("exit code 137"), std::string::npos) << first;
  EXPECT_EQ(TasksOf(detail, 1)["w0[0]"]["state"], "LOST") << "the dead AM's task is not shown running for ever";
  EXPECT_EQ(TasksOf(detail, 2)["w0[0]"]["state"], "SUCCEEDED");
  // The orphaned agent finds its AM silent and stops its program after a minute.
  EXPECT_EQ(cluster.programs().Running(), 1);
  cluster.Pass(61'000, 250);
  for (int i = 0; i < 500 && cluster.programs().Running() > 0; ++i) cluster.Pass(MiniCluster::kStepMillis);
  EXPECT_EQ(cluster.programs().Running(), 0);
}

TEST(MiniCluster, AFullHomeDiskKeepsTheViewsInAgreementAndLosesNoAttempt) {
  MiniCluster cluster("disk-full", {.home_megabytes = 8});
  if (!cluster.ready()) GTEST_SKIP() << "a tmpfs home needs root";
  std::string id = cluster.Submit(Workers({"print:up sleep:3000"}, 2)).value();
  cluster.WaitFor(id, [](const Json& d) { return Running(d, "w0[0]"); });
  {
    std::ofstream filler(cluster.home() + "/filler");
    std::string block(64 * 1024, 'x');
    while (filler.write(block.data(), static_cast<std::streamsize>(block.size()))) {
    }
  }
  Json detail = cluster.WaitFor(id, [](const Json& d) { return d["state"] != "RUNNING"; });
  ASSERT_EQ(detail["state"], "SUCCEEDED") << detail.dump();
  Json listed = cluster.jobs().List(JobFilter{}).value();
  ASSERT_FALSE(listed["jobs"].empty());
  EXPECT_EQ(listed["jobs"][0]["state"], detail["state"]) << "list and status agree while the history cannot be written";
  std::filesystem::remove(cluster.home() + "/filler");
  cluster.Pass(2'000);
  cluster.RestartServer();
  Json after = cluster.jobs().Get(id, 0, 0).value();
  EXPECT_EQ(after["state"], "SUCCEEDED") << after.dump();
  EXPECT_EQ(after["attempts"].size(), 1u) << "the restarted server did not run the job again";
}

TEST(MiniCluster, AStackRequestCrossesTheServerTheAmAndTheAgent) {
  MiniCluster cluster("stack");
  std::string id = cluster.Submit(Workers({"print:up hang"})).value();
  cluster.WaitFor(id, [](const Json& d) { return Running(d, "w0[0]"); });
  // Through the REST API, the server's stack capture, the AM's stack route (the attempt's
  // token) and the agent's heartbeat, while the cluster's time goes on.
  auto asked = std::async(std::launch::async, [&] { return cluster.Api().Post("/api/v1/jobs/" + id + "/stack", Json::object(), 20'000); });
  while (asked.wait_for(std::chrono::milliseconds(1)) != std::future_status::ready) cluster.Pass(MiniCluster::kStepMillis);
  Result<Json> stacks = asked.get();
  ASSERT_TRUE(stacks.ok()) << stacks.status().ToString();
  ASSERT_EQ((*stacks)["tasks"].size(), 1u) << stacks->dump();
  EXPECT_EQ((*stacks)["tasks"][0]["task"], "w0[0]");
  EXPECT_EQ((*stacks)["tasks"][0]["answered"], true) << "the agent answered through its heartbeat";
  EXPECT_NE(cluster.TaskLog(id, 1, "w0-0").find("==== shoal stack: stacks of w0[0]"), std::string::npos)
      << "the agent appended the stacks to the task log";
  ASSERT_TRUE(cluster.jobs().Kill(id).ok());
  cluster.WaitForState(id, "KILLED");
}

TEST(MiniCluster, ASaveModelRequestCrossesTheServerTheAmAndTheAgent) {
  MiniCluster cluster("save");
  std::string id = cluster.Submit(Workers({"print:up hang"}, 1, "outputs:\n  - {name: model, uri: out}\n")).value();
  cluster.WaitFor(id, [](const Json& d) { return Running(d, "w0[0]"); });
  Result<Json> requested = cluster.Api().Post("/api/v1/jobs/" + id + "/save-model", Json::object());
  ASSERT_TRUE(requested.ok()) << requested.status().ToString();
  Json detail = cluster.WaitFor(id, [](const Json& d) {
    const Json& saved = d["saved_models"];
    return saved.is_array() && !saved.empty() && saved[0]["state"] != "requested" && saved[0]["state"] != "uploading";
  });
  ASSERT_FALSE(detail["saved_models"].empty()) << detail.dump();
  const Json& saved = detail["saved_models"][0];
  EXPECT_EQ(saved["state"], "saved") << saved;
  std::string uri = saved["uri"].get<std::string>();
  std::string folder = (uri.starts_with("file://") ? uri.substr(7) : uri) + "/w0-0";
  EXPECT_TRUE(std::filesystem::exists(folder + "/_SUCCESS")) << folder << " was committed";
  ASSERT_TRUE(cluster.jobs().Kill(id).ok());
  cluster.WaitForState(id, "KILLED");
}

TEST(MiniCluster, AnMpiRankThatDiesFailsItsTaskByNameAndStopsTheOthers) {
  MiniCluster cluster("mpi-rank");
  // Rank 1 is killed: its orted ends cleanly (as Open MPI's do when mpirun tears the job
  // down), and only mpirun's own lines say which rank died and how.
  cluster.mpirun().Script(MpirunScript{
      .orteds = {{1, "print:orted-1 sleep:100 exit:0"}},
      .run_millis = 500,
      .output = "[1,1]<stdout>:  Process name: [[9,1],0]\n"  // a rank's line, tagged: never taken as mpirun's
                "mpirun noticed that process rank 1 with PID 4242 on node shoal-task-1 exited on signal 9 (Killed).\n",
      .exit_code = 137});
  std::string id = cluster.Submit("name: mpi\nframework: mpi\nroles:\n"
                                  "  worker: {instances: 3, cpus: 1, memory: 64M, command: ./ranks}\n").value();
  Json detail = cluster.WaitForState(id, "FAILED");
  ASSERT_EQ(detail["state"], "FAILED") << detail.dump();
  EXPECT_EQ(detail["message"].get<std::string>().rfind("task worker[1] failed: MPI rank 1 exited on signal 9 (Killed)", 0), 0u)
      << detail["message"];
  auto tasks = TasksOf(detail);
  EXPECT_EQ(tasks["worker[1]"]["state"], "FAILED") << "its orted ended with 0, but its rank died: " << tasks["worker[1]"];
  EXPECT_EQ(tasks["worker[1]"]["signal"], 9) << tasks["worker[1]"];
  EXPECT_EQ(tasks["worker[0]"]["state"], "KILLED");
  EXPECT_EQ(tasks["worker[2]"]["state"], "KILLED");
  for (int i = 0; i < 100 && cluster.programs().Running() > 0; ++i) cluster.Pass(MiniCluster::kStepMillis);
  EXPECT_EQ(cluster.programs().Running(), 0) << "every orted was stopped";
}

TEST(MiniCluster, AnMpiJobSucceedsOnlyOnMpirunsVerdict) {
  MiniCluster cluster("mpi-ok");
  // Every orted ends at once; mpirun's verdict comes a second later.
  cluster.mpirun().Script(MpirunScript{.orteds = {{0, "exit:0"}, {1, "exit:0"}}, .run_millis = 1'000, .exit_code = 0});
  std::string id = cluster.Submit("name: mpi\nframework: mpi\nroles:\n"
                                  "  worker: {instances: 2, cpus: 1, memory: 64M, command: ./ranks}\n").value();
  Json before = cluster.WaitFor(id, [](const Json& d) { return TasksOf(d).size() == 2 && TasksOf(d)["worker[1]"]["exit_code"] == 0; },
                                500);
  EXPECT_EQ(before["state"], "RUNNING") << "no task succeeds before mpirun's verdict: " << before.dump();
  bool succeeded_early = false;  // a task shown SUCCEEDED before mpirun's verdict
  Json detail = cluster.WaitFor(id, [&](const Json& d) {
    bool attempt_running = !d["attempts"].empty() && d["attempts"].back()["state"] == "RUNNING";
    for (const auto& [name, task] : TasksOf(d)) succeeded_early |= attempt_running && task["state"] == "SUCCEEDED";
    return d["state"] == "SUCCEEDED" || d["state"] == "FAILED";
  });
  ASSERT_EQ(detail["state"], "SUCCEEDED") << detail.dump();
  EXPECT_FALSE(succeeded_early);
  EXPECT_GE(detail["finished_ms"].get<int64_t>() - detail["started_ms"].get<int64_t>(), 1'000)
      << "the job ended before mpirun did";
  for (const auto& [name, task] : TasksOf(detail)) EXPECT_EQ(task["state"], "SUCCEEDED") << name;
}

}  // namespace
}  // namespace shoal::testing
