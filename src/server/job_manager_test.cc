#include "server/job_manager.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

#include "backend/fake/fake_backend.h"

namespace shoal {
namespace {

JobSpec Spec(const std::string& name, int workers, double cpus, int max_attempts = 1) {
  JobSpec spec;
  spec.name = name;
  spec.max_attempts = max_attempts;
  spec.roles.push_back(RoleSpec{.name = "worker", .instances = workers, .resources = {cpus, 1LL << 30, 0},
                                .command = "true"});
  return spec;
}

class JobManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = "/tmp/shoal-manager-test-" + std::to_string(getpid()) + ".db";
    unlink(path_.c_str());
    store_ = std::move(JobStore::Open(path_).value());
    manager_ = std::make_unique<JobManager>(*store_, backend_, clock_, "http://127.0.0.1:1", "/tmp/shoal-manager-home");
    ASSERT_TRUE(manager_->Start().ok());
  }
  void TearDown() override {
    manager_->Stop();
    unlink(path_.c_str());
  }

  std::string State(const std::string& id) {
    return manager_->Get(id, 0, 0).value()["state"].get<std::string>();
  }
  // Waits (briefly, in real time: the scheduler thread acts on its own) for a condition.
  template <typename F>
  bool Eventually(F condition) {
    for (int i = 0; i < 200; ++i) {
      if (condition()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }
  void ReportEnd(const std::string& id, int attempt, const std::string& state) {
    ASSERT_TRUE(manager_->Report(id, attempt, Json{{"state", state}, {"message", state == "FAILED" ? "task worker[0] failed: exit code 1" : ""},
                                                   {"tasks", Json::array()}, {"final", true}})
                    .ok());
    backend_.Finish(id + "/" + std::to_string(attempt), ExitInfo{state == "SUCCEEDED" ? 0 : 1, 0});
  }

  std::string path_;
  FakeClock clock_;
  FakeBackend backend_{ClusterCapacity{{4, 8LL << 30, 0}, {4, 8LL << 30, 0}}};
  std::unique_ptr<JobStore> store_;
  std::unique_ptr<JobManager> manager_;
};

TEST_F(JobManagerTest, RefusesJobsLargerThanTheCluster) {
  auto id = manager_->Submit(Spec("huge", 5, 1));
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(id.status().message().find("more than the whole cluster"), std::string::npos);
  EXPECT_EQ(manager_->List(JobFilter{}).value()["total"], 0) << "nothing was queued";
}

TEST_F(JobManagerTest, QueuesWhatDoesNotFitAndStartsItWhenResourcesFree) {
  std::string a = manager_->Submit(Spec("a", 3, 1)).value();
  std::string b = manager_->Submit(Spec("b", 2, 1)).value();
  ASSERT_TRUE(Eventually([&] { return State(a) == "RUNNING"; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  EXPECT_EQ(State(b), "QUEUED") << "b needs 2 CPUs while a holds 3 of 4";
  ReportEnd(a, 1, "SUCCEEDED");
  ASSERT_TRUE(Eventually([&] { return State(a) == "SUCCEEDED"; }));
  ASSERT_TRUE(Eventually([&] { return State(b) == "RUNNING"; }));
  EXPECT_EQ(backend_.started(), (std::vector<std::string>{a + "/1", b + "/1"}));
}

TEST_F(JobManagerTest, RetriesAFailedAttemptUpToMaxAttempts) {
  std::string id = manager_->Submit(Spec("flaky", 1, 1, 2)).value();
  ASSERT_TRUE(Eventually([&] { return State(id) == "RUNNING"; }));
  ReportEnd(id, 1, "FAILED");
  ASSERT_TRUE(Eventually([&] { return backend_.started().size() == 2; }));
  ReportEnd(id, 2, "FAILED");
  ASSERT_TRUE(Eventually([&] { return State(id) == "FAILED"; }));
  Json detail = manager_->Get(id, 0, 0).value();
  EXPECT_EQ(detail["attempts"].size(), 2u);
  EXPECT_NE(detail["message"].get<std::string>().find("worker[0] failed"), std::string::npos);
}

TEST_F(JobManagerTest, AnAmThatDiesWithoutReportingFailsTheAttempt) {
  std::string id = manager_->Submit(Spec("crash", 1, 1)).value();
  ASSERT_TRUE(Eventually([&] { return State(id) == "RUNNING"; }));
  backend_.Finish(id + "/1", ExitInfo{137, 9});
  ASSERT_TRUE(Eventually([&] { return State(id) == "FAILED"; }));
  EXPECT_NE(manager_->Get(id, 0, 0).value()["message"].get<std::string>().find("application master ended"),
            std::string::npos);
}

TEST_F(JobManagerTest, KillsQueuedAndRunningJobs) {
  std::string running = manager_->Submit(Spec("r", 4, 1)).value();
  std::string queued = manager_->Submit(Spec("q", 1, 1)).value();
  ASSERT_TRUE(Eventually([&] { return State(running) == "RUNNING"; }));
  ASSERT_TRUE(manager_->Kill(queued).ok());
  EXPECT_EQ(State(queued), "KILLED");
  ASSERT_TRUE(manager_->Kill(running).ok());
  ASSERT_TRUE(Eventually([&] { return State(running) == "KILLED"; }));
  EXPECT_EQ(backend_.killed(), std::vector<std::string>{running + "/1"});
  EXPECT_EQ(manager_->Kill("job-999").status().code(), StatusCode::kNotFound);
}

TEST_F(JobManagerTest, GetWaitsForANewVersion) {
  std::string id = manager_->Submit(Spec("w", 1, 1)).value();
  ASSERT_TRUE(Eventually([&] { return State(id) == "RUNNING"; }));
  int64_t version = manager_->Get(id, 0, 0).value()["version"];
  std::thread reporter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_TRUE(manager_->Report(id, 1, Json{{"state", "RUNNING"}, {"tasks", Json::array()}}).ok());
  });
  Json newer = manager_->Get(id, version, 5000).value();
  reporter.join();
  EXPECT_GT(newer["version"].get<int64_t>(), version);
}

TEST_F(JobManagerTest, RestartFailsAttemptsWhoseAmIsGoneAndKeepsTheQueue) {
  std::string running = manager_->Submit(Spec("r", 4, 1, 1)).value();
  std::string queued = manager_->Submit(Spec("q", 1, 1)).value();
  ASSERT_TRUE(Eventually([&] { return State(running) == "RUNNING"; }));
  manager_->Stop();
  FakeBackend fresh{ClusterCapacity{{4, 8LL << 30, 0}, {4, 8LL << 30, 0}}};
  JobManager restarted(*store_, fresh, clock_, "http://127.0.0.1:1", "/tmp/shoal-manager-home");
  ASSERT_TRUE(restarted.Start().ok());
  EXPECT_EQ(restarted.Get(running, 0, 0).value()["state"], "FAILED");
  EXPECT_NE(restarted.Get(running, 0, 0).value()["message"].get<std::string>().find("lost"), std::string::npos);
  ASSERT_TRUE(Eventually([&] { return restarted.Get(queued, 0, 0).value()["state"] == "RUNNING"; }));
  restarted.Stop();
}

}  // namespace
}  // namespace shoal
