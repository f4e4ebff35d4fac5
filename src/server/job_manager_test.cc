#include "server/job_manager.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "server/test_jobs.h"
#include "testing/scratch_directory.h"

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
  void SetUp() override { ASSERT_TRUE(jobs_.started); }

  std::string State(const std::string& id) {
    return manager_->Get(id, 0, 0).value()["state"].get<std::string>();
  }
  // Waits for a condition while the manager's time moves on: 20 ms of it per look, with a
  // short real pause for the scheduler thread to act (up to 10 s of real time on a loaded
  // machine).
  template <typename F>
  bool Eventually(F condition) {
    for (int i = 0; i < 2000; ++i) {
      if (condition()) return true;
      clock_.Advance(20);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }
  void ReportEnd(const std::string& id, int attempt, const std::string& state) {
    ASSERT_TRUE(ReportJson(*manager_, id, attempt, Json{{"state", state}, {"message", state == "FAILED" ? "task worker[0] failed: exit code 1" : ""},
                                                   {"tasks", Json::array()}, {"final", true}})
                    .ok());
    backend_.Finish(id + "/" + std::to_string(attempt), ExitInfo{state == "SUCCEEDED" ? 0 : 1, 0});
  }

  testing_support::ScratchDirectory scratch_{"manager"};
  TestJobs jobs_{scratch_ / "jobs.db", scratch_ / "home"};
  ManualClock& clock_ = jobs_.clock;
  FakeBackend& backend_ = jobs_.backend;
  std::unique_ptr<JobStore>& store_ = jobs_.store;
  std::unique_ptr<SeriesStore>& series_ = jobs_.series;
  std::unique_ptr<JobManager>& manager_ = jobs_.manager;
};

TEST_F(JobManagerTest, ASlowBackendStallsNeitherTheApiNorTheAms) {
  std::string id = manager_->Submit(Spec("patient", 1, 1)).value();
  ASSERT_TRUE(Eventually([&] { return State(id) == "RUNNING"; }));
  backend_.Stall(true);  // the scheduler's next poll blocks, as a squeue that hangs would
  ASSERT_TRUE(Eventually([&] { return backend_.PollStalled(); }));
  // Every call below would wait for the stalled poll if the scheduler held the mutex; the
  // future's bound is only a hang guard.
  auto calls = std::async(std::launch::async, [&] {
    EXPECT_EQ(manager_->Get(id, 0, 0).value()["state"], "RUNNING");
    EXPECT_EQ(manager_->List(JobFilter{}).value()["total"], 1);
    EXPECT_TRUE(ReportJson(*manager_, id, 1, Json{{"state", "RUNNING"}, {"tasks", Json::array()}}).ok());
    std::string queued = manager_->Submit(Spec("behind", 1, 1)).value();
    EXPECT_EQ(manager_->Kill(queued).value()["state"], "KILLED");
  });
  bool answered = calls.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
  backend_.Stall(false);
  calls.wait();
  EXPECT_TRUE(answered) << "an API call waited for the backend";
}

TEST_F(JobManagerTest, TheClusterViewListsEachNodeWithWhatIsAllocatedAndWhetherLimitsHold) {
  std::string id = manager_->Submit(Spec("holder", 1, 1.5)).value();
  ASSERT_TRUE(Eventually([&] { return State(id) == "RUNNING"; }));
  Json cluster = manager_->ClusterInfo();
  ASSERT_EQ(cluster["nodes"].size(), 1u) << cluster.dump();
  const Json& node = cluster["nodes"][0];
  EXPECT_EQ(node["name"], "fake");
  EXPECT_EQ(node["state"], "up");
  EXPECT_EQ(node["allocated"]["cpus"], 1.5) << "admission's bookkeeping, where the backend has none";
  EXPECT_EQ(node["capacity"]["cpus"], cluster["total"]["cpus"]);
  EXPECT_EQ(cluster["task_limits"]["enforced"], false);
  EXPECT_EQ(cluster["task_limits"]["detail"], "the fake backend runs no processes");
  EXPECT_EQ(manager_->Get(id, 0, 0).value()["limits_not_enforced"], "the fake backend runs no processes");
}

TEST(JobManagerSteps, TestsStepTheSchedulerThemselves) {
  // No scheduler thread: every pass is the test's, on a fake clock, so nothing races it.
  testing_support::ScratchDirectory scratch("steps");
  const std::string db = scratch / "jobs.db";
  auto store = JobStore::Open(db).value();
  auto series = SeriesStore::Open(db).value();
  FakeClock clock;
  FakeBackend backend{ClusterCapacity{{2, 8LL << 30, 0}, {2, 8LL << 30, 0}}};
  JobManager manager(*store, *series, backend, clock, "http://127.0.0.1:1", scratch / "home");
  ASSERT_TRUE(manager.Recover().ok());
  std::string first = manager.Submit(Spec("first", 2, 1)).value();
  std::string second = manager.Submit(Spec("second", 1, 1)).value();
  EXPECT_EQ(manager.Get(first, 0, 0).value()["state"], "QUEUED") << "nothing happens between passes";
  manager.Step();
  EXPECT_EQ(manager.Get(first, 0, 0).value()["state"], "RUNNING");
  EXPECT_EQ(manager.Get(second, 0, 0).value()["state"], "QUEUED") << "the cluster is full";
  EXPECT_EQ(backend.started(), std::vector<std::string>{first + "/1"});
  ASSERT_TRUE(ReportJson(manager, first, 1, Json{{"state", "SUCCEEDED"}, {"tasks", Json::array()}, {"final", true}}).ok());
  backend.Finish(first + "/1", ExitInfo{0, 0});
  manager.Step();  // sees the AM's end and admits the next job in the same pass
  EXPECT_EQ(manager.Get(first, 0, 0).value()["state"], "SUCCEEDED");
  EXPECT_EQ(manager.Get(second, 0, 0).value()["state"], "RUNNING");
  manager.Stop();
}

TEST_F(JobManagerTest, RefusesJobsLargerThanTheCluster) {
  auto id = manager_->Submit(Spec("huge", 5, 1));
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(id.status().message().find("more than the whole cluster"), std::string::npos);
  EXPECT_EQ(manager_->List(JobFilter{}).value()["total"], 0) << "nothing was queued";
}

TEST_F(JobManagerTest, RefusesAJobForAnotherCluster) {
  JobSpec spec = Spec("elsewhere", 1, 1);
  spec.cluster = "slurm";
  auto id = manager_->Submit(spec);
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(id.status().message().find("shoal server --cluster slurm"), std::string::npos) << id.status().message();
}

TEST_F(JobManagerTest, ShowsTheClustersWordsUntilTheAmReports) {
  std::string id = manager_->Submit(Spec("waits", 1, 1)).value();
  ASSERT_TRUE(Eventually([&] { return State(id) == "RUNNING"; }));
  backend_.SetNote(id + "/1", AttemptNote{"waiting for Slurm: the nodes it needs are busy (PENDING, Resources)", false});
  ASSERT_TRUE(Eventually([&] {
    return manager_->Get(id, 0, 0).value()["message"] == "waiting for Slurm: the nodes it needs are busy (PENDING, Resources)";
  }));
}

TEST_F(JobManagerTest, AnAttemptTheClusterEndedFailsAndIsRetriedWhateverTheAmSaid) {
  std::string id = manager_->Submit(Spec("node-fails", 1, 1, 2)).value();
  ASSERT_TRUE(Eventually([&] { return State(id) == "RUNNING"; }));
  // Slurm stops the AM when a node fails; the AM takes that for a kill.
  backend_.SetNote(id + "/1", AttemptNote{"node node2 failed; Slurm ended the attempt (NODE_FAIL)", true});
  ReportEnd(id, 1, "KILLED");
  ASSERT_TRUE(Eventually([&] { return backend_.started().size() == 2; }));
  Json first = manager_->Get(id, 0, 0).value()["attempts"][0];
  EXPECT_EQ(first["state"], "FAILED");
  EXPECT_EQ(first["message"], "node node2 failed; Slurm ended the attempt (NODE_FAIL)");
}

TEST_F(JobManagerTest, AnAttemptTheClusterPreemptedGoesBackToItsQueueWithoutUsingAnAttempt) {
  std::string id = manager_->Submit(Spec("slurm-preempted", 1, 1, 1)).value();
  ASSERT_TRUE(Eventually([&] { return State(id) == "RUNNING"; }));
  AttemptNote preempted{"Slurm preempted the attempt for another job (PREEMPTED)", true};
  preempted.preempted = true;
  backend_.SetNote(id + "/1", preempted);
  ReportEnd(id, 1, "FAILED");  // the AM took the SIGTERM for a failure
  ASSERT_TRUE(Eventually([&] { return backend_.started().size() == 2; })) << "max_attempts: 1, and it runs again";
  Json first = manager_->Get(id, 0, 0).value()["attempts"][0];
  EXPECT_EQ(first["state"], "PREEMPTED");
  EXPECT_EQ(first["message"], "preempted: Slurm preempted the attempt for another job (PREEMPTED)");
}

TEST_F(JobManagerTest, ATaskOnTheNodeThatFailedSaysSo) {
  std::string id = manager_->Submit(Spec("node-fails", 2, 1, 2)).value();
  ASSERT_TRUE(Eventually([&] { return State(id) == "RUNNING"; }));
  AttemptNote failed{"node node2 failed; Slurm ended the attempt (NODE_FAIL)", true, {"10.253.0.12"}};
  backend_.SetNote(id + "/1", failed);
  Json tasks = Json::array({Json{{"role", "worker"}, {"index", 0}, {"state", "KILLED"}, {"host", "10.253.0.11"},
                                 {"message", "stopped by Shoal"}},
                            Json{{"role", "worker"}, {"index", 1}, {"state", "FAILED"}, {"host", "10.253.0.12"},
                                 {"message", "the container ended before its task did (exit code 0)"}}});
  ASSERT_TRUE(ReportJson(*manager_, id, 1, Json{{"state", "KILLED"}, {"tasks", tasks}, {"final", true}}).ok());
  backend_.Finish(id + "/1", ExitInfo{1, 0});
  ASSERT_TRUE(Eventually([&] { return backend_.started().size() == 2; }));
  Json first = manager_->Get(id, 0, 0).value()["attempts"][0];
  EXPECT_EQ(first["tasks"][1]["message"], "its node failed: node node2 failed; Slurm ended the attempt (NODE_FAIL)");
  EXPECT_EQ(first["tasks"][0]["message"], "stopped by Shoal") << "a task elsewhere keeps its own end";
}

TEST_F(JobManagerTest, QueuesWhatDoesNotFitAndStartsItWhenResourcesFree) {
  std::string a = manager_->Submit(Spec("a", 3, 1)).value();
  std::string b = manager_->Submit(Spec("b", 2, 1)).value();
  ASSERT_TRUE(Eventually([&] { return State(a) == "RUNNING"; }));
  const int64_t passes = manager_->passes();
  ASSERT_TRUE(Eventually([&] { return manager_->passes() >= passes + 3; })) << "scheduler passes go by";
  EXPECT_EQ(State(b), "QUEUED") << "b needs 2 CPUs while a holds 3 of 4";
  ReportEnd(a, 1, "SUCCEEDED");
  ASSERT_TRUE(Eventually([&] { return State(a) == "SUCCEEDED"; }));
  ASSERT_TRUE(Eventually([&] { return State(b) == "RUNNING"; }));
  EXPECT_EQ(backend_.started(), (std::vector<std::string>{a + "/1", b + "/1"}));
}

// A manager in a home of its own whose queues.yaml holds `queues`, removed at the end.
class QueuesHome {
 public:
  QueuesHome(const std::string& name, const std::string& queues)
      : scratch_(name), home_(MakeHome(scratch_ / "home", queues)), jobs(home_ + "/jobs.db", home_) {}
  ~QueuesHome() { jobs.manager->Stop(); }
  JobManager& manager() { return *jobs.manager; }
  const std::string& home() const { return home_; }
  Json Job(const std::string& id) { return jobs.manager->Get(id, 0, 0).value(); }
  // Moves the manager's time on until `condition` holds (up to 10 s of real time).
  template <typename F>
  bool WaitFor(F condition) {
    for (int i = 0; i < 2000 && !condition(); ++i) {
      jobs.clock.Advance(20);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return condition();
  }

 private:
  static std::string MakeHome(const std::string& home, const std::string& queues) {
    std::filesystem::create_directories(home);
    std::ofstream(home + "/queues.yaml") << queues;
    return home;
  }
  testing_support::ScratchDirectory scratch_;
  std::string home_;

 public:
  TestJobs jobs;
};

TEST(JobManagerQueues, JobsWaitInTheirQueueWithAReasonAndImpossibleOnesAreRefused) {
  QueuesHome queues_home("queues", "queues:\n  research: {guarantee: 50%, max: 50%}\n");
  ASSERT_TRUE(queues_home.jobs.started);
  JobManager& manager = queues_home.manager();
  auto wait_for = [&](auto condition) { return queues_home.WaitFor(condition); };
  const std::string home = queues_home.home();
  auto in = [](JobSpec spec, const std::string& queue) {
    spec.queue = queue;
    return spec;
  };
  auto unknown = manager.Submit(in(Spec("lost", 1, 1), "nowhere"));
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(),
            "queue: this server has no queue 'nowhere'; use one of: research, default (shoal queues shows them)");
  auto too_big = manager.Submit(in(Spec("big", 3, 1), "research"));
  ASSERT_FALSE(too_big.ok());
  EXPECT_NE(too_big.status().message().find("more than queue research may ever use (2 CPUs"), std::string::npos)
      << too_big.status().message();
  EXPECT_EQ(manager.List(JobFilter{}).value()["total"], 0) << "nothing was queued";

  std::string first = manager.Submit(in(Spec("first", 2, 1), "research")).value();
  std::string second = manager.Submit(in(Spec("second", 1, 1), "research")).value();
  auto job = [&](const std::string& id) { return queues_home.Job(id); };
  ASSERT_TRUE(wait_for([&] { return job(first)["state"] == "RUNNING" && job(second)["wait_reason"] != ""; }));
  EXPECT_EQ(job(second)["state"], "QUEUED") << "2 CPUs are free, but research may use only 2 of the 4";
  EXPECT_EQ(job(second)["wait_reason"],
            "queue research may use at most 2 CPUs (its max, 50% of the cluster) and uses 2; this job needs 1");
  EXPECT_EQ(job(second)["queue"], "research");
  Json queues = manager.Queues();
  EXPECT_EQ(queues["queues"][0]["name"], "research");
  EXPECT_EQ(queues["queues"][0]["used"]["cpus"], 2);
  EXPECT_EQ(queues["queues"][0]["waiting"], Json::array({second}));
  EXPECT_EQ(queues["queues"][1]["name"], "default");
  EXPECT_EQ(queues["error"], "");

  // The default queue's job is not held back by research's limit.
  std::string other = manager.Submit(Spec("other", 1, 1)).value();
  ASSERT_TRUE(wait_for([&] { return job(other)["state"] == "RUNNING"; }));
  EXPECT_EQ(job(second)["state"], "QUEUED");

  // Raising the max in the file lets the waiting job start, without a restart.
  std::ofstream(home + "/queues.yaml") << "queues:\n  research: {guarantee: 50%, max: 100%}\n";
  ASSERT_TRUE(wait_for([&] { return job(second)["state"] == "RUNNING"; }));
  EXPECT_EQ(job(second)["wait_reason"], "");
}

TEST(JobManagerQueues, ABorrowingJobIsPreemptedBackToItsQueueWithoutUsingAnAttempt) {
  QueuesHome queues_home("preempt", "queues:\n  research: {guarantee: 50%}\n  batch: {guarantee: 50%}\n");
  ASSERT_TRUE(queues_home.jobs.started);
  JobManager& manager = queues_home.manager();
  auto wait_for = [&](auto condition) { return queues_home.WaitFor(condition); };
  TestJobs& jobs = queues_home.jobs;
  auto job = [&](const std::string& id) { return queues_home.Job(id); };
  JobSpec batch = Spec("batch", 4, 1);  // the whole cluster: borrows research's half
  batch.queue = "batch";
  std::string borrower = manager.Submit(batch).value();
  ASSERT_TRUE(wait_for([&] { return job(borrower)["state"] == "RUNNING"; }));
  JobSpec research = Spec("research", 2, 1);
  research.queue = "research";
  std::string owner = manager.Submit(research).value();
  ASSERT_TRUE(wait_for([&] { return jobs.backend.killed().size() == 1; })) << "the borrower's attempt is stopped";
  ASSERT_TRUE(wait_for([&] { return job(borrower)["state"] == "QUEUED"; }));
  Json preempted = job(borrower);
  EXPECT_EQ(preempted["attempts"][0]["state"], "PREEMPTED");
  EXPECT_EQ(preempted["message"],
            "attempt 1 was preempted: " + owner + " of queue research, which is below its guarantee, needs its resources; "
            "queue batch was using more than its guarantee; back in queue batch");
  ASSERT_TRUE(wait_for([&] { return job(owner)["state"] == "RUNNING"; }));
  // The owner's job ends; the borrower runs again although its spec allows one attempt.
  jobs.backend.Finish(owner + "/1", ExitInfo{0, 0});
  ASSERT_TRUE(wait_for([&] { return job(borrower)["state"] == "RUNNING"; }));
  EXPECT_EQ(job(borrower)["attempt"], 2);
}

// A borrower whose AM has reported (it serves) and a research job that takes its place.
struct NoticedPreemption {
  explicit NoticedPreemption(const std::string& name)
      : home(name, "max_preemption_grace: 5m\nqueues:\n  research: {guarantee: 50%}\n  batch: {guarantee: 50%}\n") {}
  Result<Json> Report(const std::string& state, bool final_report) {
    return ReportJson(home.manager(), borrower, 1,
                      Json{{"state", state}, {"am_addr", "127.0.0.1:9"}, {"tasks", Json::array()}, {"final", final_report}});
  }
  // Starts the borrower (45 s of grace), has its AM report, then submits the research job.
  void Start() {
    JobSpec batch = Spec("batch", 4, 1);
    batch.queue = "batch";
    batch.preemption_grace_ms = 45'000;
    borrower = home.manager().Submit(batch).value();
    ASSERT_TRUE(home.WaitFor([&] { return home.Job(borrower)["state"] == "RUNNING"; }));
    Result<Json> reply = Report("RUNNING", false);
    ASSERT_TRUE(reply.ok()) << reply.status().ToString();
    EXPECT_FALSE(reply->contains("preempt")) << *reply;
    JobSpec research = Spec("research", 2, 1);
    research.queue = "research";
    owner = home.manager().Submit(research).value();
    ASSERT_TRUE(home.WaitFor([&] { return home.Job(borrower)["message"].get<std::string>().starts_with("being preempted"); }));
  }
  QueuesHome home;
  std::string borrower, owner;
};

TEST(JobManagerQueues, AnAmThatServesIsToldOfThePreemptionAndItsProgramsGetTheirGrace) {
  NoticedPreemption p("notice");
  ASSERT_TRUE(p.home.jobs.started);
  p.Start();
  EXPECT_EQ(p.home.Job(p.borrower)["message"],
            "being preempted: " + p.owner + " of queue research, which is below its guarantee, needs its resources; queue "
            "batch was using more than its guarantee; its programs have 45.0s to checkpoint");
  EXPECT_TRUE(p.home.jobs.backend.killed().empty()) << "the AM is told, not killed";
  Result<Json> reply = p.Report("RUNNING", false);
  ASSERT_TRUE(reply.ok());
  ASSERT_TRUE(reply->contains("preempt")) << *reply;
  EXPECT_EQ((*reply)["preempt"]["reason"].get<std::string>().substr(0, p.owner.size()), p.owner);
  int64_t grace = (*reply)["preempt"]["grace_ms"];
  EXPECT_GT(grace, 0);
  EXPECT_LE(grace, 45'000);
  // The AM ends the attempt once its programs checkpointed: preempted, back in its queue.
  ASSERT_TRUE(p.Report("KILLED", true).ok());
  p.home.jobs.backend.Finish(p.borrower + "/1", ExitInfo{0, 0});
  ASSERT_TRUE(p.home.WaitFor([&] { return p.home.Job(p.borrower)["state"] == "QUEUED"; }));
  EXPECT_EQ(p.home.Job(p.borrower)["attempts"][0]["state"], "PREEMPTED");
  EXPECT_TRUE(p.home.jobs.backend.killed().empty());
}

TEST(JobManagerQueues, APreemptedAttemptThatOutlivesItsGraceAndUploadsIsKilled) {
  NoticedPreemption p("outlives");
  ASSERT_TRUE(p.home.jobs.started);
  p.Start();
  p.home.jobs.clock.Advance(45'000 + protocol::kPreemptUploadAllowanceMs);
  p.home.manager().Step();
  EXPECT_TRUE(p.home.jobs.backend.killed().empty()) << "the server's margin is not over yet";
  p.home.jobs.clock.Advance(JobManager::kPreemptKillMarginMs);
  ASSERT_TRUE(p.home.WaitFor([&] { return p.home.jobs.backend.killed().size() == 1; }));
  ASSERT_TRUE(p.home.WaitFor([&] { return p.home.Job(p.borrower)["state"] == "QUEUED"; }));
  EXPECT_EQ(p.home.Job(p.borrower)["attempts"][0]["state"], "PREEMPTED");
}

// A 4-CPU job that checkpoints (in `checkpoints`) runs 10 s; a new 4-CPU job, less served,
// preempts it for service. Levels must be tiny and min_run_before_preemption 0s.
void PreemptALongJobForService(QueuesHome& home, const std::string& checkpoints, std::string& served, std::string& next) {
  JobSpec long_one = Spec("long", 4, 1);
  long_one.checkpoint = CheckpointSpec{"ckpt", checkpoints, 3};
  served = home.manager().Submit(long_one).value();
  ASSERT_TRUE(home.WaitFor([&] { return home.Job(served)["state"] == "RUNNING"; }));
  home.jobs.clock.Advance(10'000);
  next = home.manager().Submit(Spec("next", 4, 1)).value();
  ASSERT_TRUE(home.WaitFor([&] { return home.Job(served)["state"] == "QUEUED"; }));
}

TEST(JobManagerQueues, WithServiceLevelsANewJobPreemptsALongRunningOneThatCheckpoints) {
  // Levels at 0.001 CPU-hours (3.6 CPU-seconds): a 4-CPU job is past it within a second.
  QueuesHome home("service", "service_levels: [0.001]\nmin_run_before_preemption: 0s\n");
  ASSERT_TRUE(home.jobs.started);
  JobSpec bare = Spec("bare", 4, 1);
  std::string without = home.manager().Submit(bare).value();
  ASSERT_TRUE(home.WaitFor([&] { return home.Job(without)["state"] == "RUNNING"; }));
  home.jobs.clock.Advance(10'000);
  std::string fresh = home.manager().Submit(Spec("fresh", 4, 1)).value();
  ASSERT_TRUE(home.WaitFor([&] { return !home.Job(fresh)["wait_reason"].get<std::string>().empty(); }));
  EXPECT_TRUE(home.jobs.backend.killed().empty()) << "a job without checkpoints is not preempted for service";
  home.jobs.backend.Finish(without + "/1", ExitInfo{0, 0});
  ASSERT_TRUE(home.WaitFor([&] { return home.Job(fresh)["state"] == "RUNNING"; }));
  home.jobs.backend.Finish(fresh + "/1", ExitInfo{0, 0});

  std::string served, next;
  ASSERT_NO_FATAL_FAILURE(PreemptALongJobForService(home, home.home() + "/ckpt", served, next));
  Json preempted = home.Job(served);
  EXPECT_EQ(preempted["attempts"][0]["state"], "PREEMPTED");
  EXPECT_NE(preempted["message"].get<std::string>().find("for " + next + " in queue default, which has had less service"),
            std::string::npos) << preempted["message"];
  ASSERT_TRUE(home.WaitFor([&] { return home.Job(next)["state"] == "RUNNING"; }));
}

TEST(JobManagerQueues, AServedJobThatWaitedPastMaxWaitToResumeGoesFirstAndIsNotPreemptedForServiceAgain) {
  QueuesHome home("resume", "service_levels: [0.001]\nmin_run_before_preemption: 0s\nmax_wait_to_resume: 1h\n");
  ASSERT_TRUE(home.jobs.started);
  std::string served, next;
  ASSERT_NO_FATAL_FAILURE(PreemptALongJobForService(home, home.home() + "/ckpt", served, next));
  ASSERT_TRUE(home.WaitFor([&] { return home.Job(next)["state"] == "RUNNING"; }));
  // Half an hour waiting: behind a fresh job; past an hour in all: first, by its bound.
  home.jobs.clock.Advance(30 * 60'000);
  std::string fresh = home.manager().Submit(Spec("fresh", 4, 1)).value();
  home.manager().Step();
  EXPECT_EQ(home.Job(served)["wait_reason"].get<std::string>().find("max_wait_to_resume"), std::string::npos);
  home.jobs.clock.Advance(31 * 60'000);
  home.manager().Step();
  ASSERT_TRUE(home.WaitFor([&] {
    return home.Job(served)["wait_reason"].get<std::string>().find("longer in all than the server's max_wait_to_resume") !=
           std::string::npos;
  })) << home.Job(served)["wait_reason"];
  home.jobs.backend.Finish(next + "/1", ExitInfo{0, 0});
  ASSERT_TRUE(home.WaitFor([&] { return home.Job(served)["state"] == "RUNNING"; }));
  EXPECT_EQ(home.Job(fresh)["state"], "QUEUED") << "the served job went first";
  // Resumed past its bound, it runs to its end: the fresh job, less served, waits.
  home.jobs.clock.Advance(10'000);
  home.manager().Step();
  EXPECT_EQ(home.Job(served)["attempts"].size(), 2u);
  EXPECT_EQ(home.Job(served)["state"], "RUNNING");
  EXPECT_EQ(home.Job(fresh)["wait_reason"].get<std::string>().find("preempting"), std::string::npos)
      << home.Job(fresh)["wait_reason"];
}

TEST(JobManagerQueues, AGraceLongerThanTheServerAllowsIsRefused) {
  QueuesHome home("grace", "max_preemption_grace: 2m\n");
  ASSERT_TRUE(home.jobs.started);
  JobSpec spec = Spec("patient", 1, 1);
  spec.preemption_grace_ms = 180'000;
  auto refused = home.manager().Submit(spec);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.status().message(),
            "preemption_grace: 3m00s is longer than this server allows (2m00s, max_preemption_grace in its queues.yaml); ask "
            "for at most that");
  EXPECT_EQ(home.manager().List(JobFilter{}).value()["total"], 0);
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
  // The clock stands still, so the Get can only end through a newer version. The report
  // is sent once the Get has parked (one more waiter on the clock).
  size_t parked_before = clock_.Waiters();
  auto newer = std::async(std::launch::async, [&] { return manager_->Get(id, version, 5000); });
  for (int i = 0; i < 100'000 && clock_.Waiters() <= parked_before; ++i) std::this_thread::yield();
  ASSERT_TRUE(ReportJson(*manager_, id, 1, Json{{"state", "RUNNING"}, {"tasks", Json::array()}}).ok());
  ASSERT_EQ(newer.wait_for(std::chrono::seconds(30)), std::future_status::ready) << "hang guard";
  EXPECT_GT(newer.get().value()["version"].get<int64_t>(), version);
}

TEST_F(JobManagerTest, RestartFailsAttemptsWhoseAmIsGoneAndKeepsTheQueue) {
  std::string running = manager_->Submit(Spec("r", 4, 1, 1)).value();
  std::string queued = manager_->Submit(Spec("q", 1, 1)).value();
  ASSERT_TRUE(Eventually([&] { return State(running) == "RUNNING"; }));
  manager_->Stop();
  FakeBackend fresh{ClusterCapacity{{4, 8LL << 30, 0}, {4, 8LL << 30, 0}}};
  JobManager restarted(*store_, *series_, fresh, clock_, "http://127.0.0.1:1", manager_->home());
  ASSERT_TRUE(restarted.Start().ok());
  EXPECT_EQ(restarted.Get(running, 0, 0).value()["state"], "FAILED");
  EXPECT_NE(restarted.Get(running, 0, 0).value()["message"].get<std::string>().find("lost"), std::string::npos);
  ASSERT_TRUE(Eventually([&] { return restarted.Get(queued, 0, 0).value()["state"] == "RUNNING"; }));
  restarted.Stop();
}

Json RunningTask(int index, double rtt_ms) {
  return Json{{"role", "worker"}, {"index", index}, {"state", "RUNNING"}, {"progress", 0.5}, {"cpu", 80.0},
              {"rss", 1 << 20}, {"heartbeat_rtt_ms", rtt_ms}};
}

TEST_F(JobManagerTest, ReportsAppendSeriesServedPerAttempt) {
  std::string id = manager_->Submit(Spec("s", 2, 1)).value();
  ASSERT_TRUE(Eventually([&] { return State(id) == "RUNNING"; }));
  Json report = Json::parse(R"({"state": "RUNNING", "board_url": "http://127.0.0.1:6006/",
    "series": [{"role": "worker", "index": 0, "samples": [{"t": 1, "cpu": 80, "rss": 1048576, "progress": 0.5}],
                "metrics": [{"t": 1, "step": 10, "name": "loss", "value": 0.31}]}]})");
  report["tasks"] = Json::array({RunningTask(0, 1.5), RunningTask(1, 3)});
  ASSERT_TRUE(ReportJson(*manager_, id, 1, report).ok());
  report["series"][0]["metrics"][0]["step"] = 20;
  report["series"][0]["samples"] = Json::array();
  ASSERT_TRUE(ReportJson(*manager_, id, 1, report).ok());

  Json series = manager_->Series(id, 0, {}).value();
  EXPECT_EQ(series["attempt"], 1);
  ASSERT_EQ(series["tasks"].size(), 1u);
  EXPECT_EQ(series["tasks"][0]["samples"].size(), 1u);
  ASSERT_EQ(series["tasks"][0]["metrics"].size(), 2u);
  EXPECT_EQ(series["tasks"][0]["metrics"][1]["step"], 20);
  SeriesCursor cursor{series["next"]["sample"], series["next"]["point"]};
  EXPECT_TRUE(manager_->Series(id, 1, cursor).value()["tasks"].empty());
  EXPECT_EQ(manager_->Series(id, 2, {}).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(manager_->Series("job-99", 0, {}).status().code(), StatusCode::kNotFound);

  Json detail = manager_->Get(id, 0, 0).value();
  EXPECT_EQ(detail["board_url"], "http://127.0.0.1:6006/");
  EXPECT_EQ(detail["attempts"][0]["tasks"][1]["cpu"], 80.0);
  EXPECT_EQ(protocol::Encode(store_->Load(JobSeqFromId(id)).value()->Detail()).dump().find("\"samples\""), std::string::npos)
      << "series are not kept in the job's row";
  JobMetrics metrics = manager_->Metrics().value();
  EXPECT_EQ(metrics.heartbeat_rtt.count, 4u);
  EXPECT_EQ(metrics.tasks_by_state["RUNNING"], 2);
  EXPECT_EQ(metrics.jobs_by_state["RUNNING"], 1);
}

TEST_F(JobManagerTest, AMalformedReportChangesNothing) {
  std::string id = manager_->Submit(Spec("m", 1, 1)).value();
  ASSERT_TRUE(Eventually([&] { return State(id) == "RUNNING"; }));
  int64_t version = manager_->Get(id, 0, 0).value()["version"];
  Json report{{"state", "FAILED"}, {"tasks", Json::array()}, {"series", Json::array({Json{{"role", "worker"}}})}};
  auto reply = ReportJson(*manager_, id, 1, report);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), StatusCode::kInvalidArgument);
  Json detail = manager_->Get(id, 0, 0).value();
  EXPECT_EQ(detail["version"], version);
  EXPECT_EQ(detail["attempts"][0]["state"], "STARTING");
}

TEST_F(JobManagerTest, SaveModelOnAJobWithoutOutputsIsRefusedAtOnce) {
  std::string id = manager_->Submit(Spec("plain", 1, 1)).value();
  ASSERT_TRUE(Eventually([&] { return State(id) == "RUNNING"; }));
  auto refused = manager_->SaveModel(id);
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition) << "409, not a request that fails later";
  EXPECT_NE(refused.status().message().find("has no outputs"), std::string::npos) << refused.status().message();
  EXPECT_TRUE(manager_->Get(id, 0, 0).value()["saved_models"].empty()) << "nothing recorded";
}

TEST_F(JobManagerTest, SaveModelRecordsARequestOnTheRunningAttempt) {
  JobSpec big = Spec("big", 4, 1);
  big.outputs.push_back({.name = "model", .path = "model", .uri = "file:///data/m/"});
  big.outputs.push_back({.name = "best", .path = "best", .uri = "s3://b/best", .from = "worker[0]"});
  std::string queued_spec = manager_->Submit(big).value();
  ASSERT_TRUE(Eventually([&] { return State(queued_spec) == "RUNNING"; }));
  std::string queued = manager_->Submit(Spec("q", 1, 1)).value();
  EXPECT_EQ(manager_->SaveModel(queued).status().code(), StatusCode::kFailedPrecondition) << "not running yet";
  EXPECT_EQ(manager_->SaveModel("job-77").status().code(), StatusCode::kNotFound);

  Json entry = manager_->SaveModel(queued_spec).value();
  EXPECT_EQ(entry["state"], "requested");
  std::string name = entry["name"];
  EXPECT_EQ(entry["targets"], Json::array({"file:///data/m/saved-" + name + "/", "s3://b/best/saved-" + name + "/"}))
      << "every output's folder, for the CLI to print";
  Json detail = manager_->Get(queued_spec, 0, 0).value();
  ASSERT_EQ(detail["saved_models"].size(), 1u);
  EXPECT_EQ(detail["saved_models"][0]["name"], entry["name"]);
  EXPECT_EQ(detail["saved_models"][0]["attempt"], 1);
  Json reply = ReportJson(*manager_, queued_spec, 1, Json{{"tasks", Json::array()}}).value();
  ASSERT_EQ(reply["save_requests"].size(), 1u) << "the AM learns of the request from the reply";
  Json saved{{"tasks", Json::array()},
             {"saved_models", Json::array({Json{{"name", entry["name"]}, {"state", "saved"}, {"uri", "file:///m"}}})}};
  EXPECT_TRUE(ReportJson(*manager_, queued_spec, 1, saved).value()["save_requests"].empty());
  EXPECT_EQ(manager_->Get(queued_spec, 0, 0).value()["saved_models"][0]["state"], "saved");

  ReportEnd(queued_spec, 1, "SUCCEEDED");
  ASSERT_TRUE(Eventually([&] { return State(queued_spec) == "SUCCEEDED"; }));
  auto ended = manager_->SaveModel(queued_spec);
  EXPECT_EQ(ended.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(ended.status().message().find("only while the job runs"), std::string::npos);
}

}  // namespace
}  // namespace shoal
