#include "master/attempt_tracker.h"
#include "master/mpi_launch.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

JobSpec Spec(int workers, int ps = 0) {
  JobSpec spec;
  spec.timeouts.heartbeat_ms = 10'000;
  spec.timeouts.register_ms = 20'000;
  spec.roles.push_back(RoleSpec{.name = "worker", .instances = workers, .command = "true"});
  if (ps > 0) spec.roles.push_back(RoleSpec{.name = "ps", .instances = ps, .command = "true", .service = true});
  return spec;
}

// Launches, registers and starts every task.
void StartAll(AttemptTracker& tracker) {
  for (const auto& task : std::vector<TaskStatus>(tracker.tasks())) {
    tracker.Launched(task.rank, "c" + std::to_string(task.rank));
    ASSERT_TRUE(tracker.Register(task.role, task.index, "127.0.0.1", {2000 + task.rank}).ok());
  }
  for (const auto& task : std::vector<TaskStatus>(tracker.tasks())) {
    ASSERT_TRUE(tracker.Started(task.role, task.index, 100 + task.rank).ok());
  }
}

TEST(AttemptTracker, SucceedsWhenEveryWorkerSucceeds) {
  FakeClock clock;
  AttemptTracker tracker(Spec(2), "job-1", 1, {}, clock);
  EXPECT_FALSE(tracker.AllRegistered());
  StartAll(tracker);
  EXPECT_TRUE(tracker.AllRegistered());
  EXPECT_EQ(tracker.state(), AttemptState::kRunning);
  ClusterView view = tracker.Cluster("127.0.0.1:9");
  ASSERT_EQ(view.tasks.size(), 2u);
  EXPECT_EQ(view.tasks[1].ports, std::vector<int>{2001});

  ASSERT_TRUE(tracker.Exited("worker", 0, {0, 0}, "").ok());
  EXPECT_EQ(tracker.state(), AttemptState::kRunning);
  ASSERT_TRUE(tracker.Exited("worker", 1, {0, 0}, "").ok());
  EXPECT_EQ(tracker.state(), AttemptState::kSucceeded);
  EXPECT_FALSE(tracker.Done()) << "containers have not ended yet";
  tracker.ContainerEnded("c0", {0, 0});
  tracker.ContainerEnded("c1", {0, 0});
  EXPECT_TRUE(tracker.Done());
  EXPECT_EQ(tracker.tasks()[0].state, TaskState::kSucceeded);
}

TEST(AttemptTracker, AFailedWorkerFailsTheAttemptAndStopsTheOthers) {
  FakeClock clock;
  AttemptTracker tracker(Spec(3), "job-1", 1, {}, clock);
  StartAll(tracker);
  ASSERT_TRUE(tracker.Exited("worker", 1, {1, 0}, "").ok());
  EXPECT_EQ(tracker.state(), AttemptState::kFailed);
  EXPECT_NE(tracker.message().find("worker[1] failed: exit code 1"), std::string::npos) << tracker.message();
  EXPECT_EQ(tracker.TasksToStop(), (std::vector<int>{0, 2}));

  AttemptTracker out_of_memory(Spec(2), "job-1", 1, {}, clock);
  StartAll(out_of_memory);
  const std::string sentence = "worker[1] used more than its 64M of memory (peak 64.0M) and was killed by the kernel";
  ASSERT_TRUE(out_of_memory.Exited("worker", 1, {137, 9}, sentence).ok());
  EXPECT_EQ(out_of_memory.message(), sentence) << "a reason that names its task is not prefixed again";
  EXPECT_TRUE(tracker.TasksToStop().empty()) << "each task is stopped once";
  ASSERT_TRUE(tracker.Exited("worker", 0, {143, 15}, "").ok());
  tracker.ContainerEnded("c0", {0, 0});
  tracker.ContainerEnded("c1", {0, 0});
  tracker.ContainerEnded("c2", {0, 15});
  EXPECT_TRUE(tracker.Done());
  EXPECT_EQ(tracker.tasks()[0].state, TaskState::kKilled);
  EXPECT_EQ(tracker.tasks()[1].state, TaskState::kFailed);
  EXPECT_EQ(tracker.tasks()[2].state, TaskState::kKilled);
}

TEST(AttemptTracker, ToleratedFailuresDoNotFailTheAttempt) {
  FakeClock clock;
  JobSpec spec = Spec(2);
  spec.roles[0].tolerate_failure = true;
  AttemptTracker tracker(spec, "job-1", 1, {}, clock);
  StartAll(tracker);
  ASSERT_TRUE(tracker.Exited("worker", 0, {1, 0}, "").ok());
  // The tolerated task itself is FAILED with its exit code; the attempt goes on and no
  // other task is stopped.
  EXPECT_EQ(tracker.Find("worker", 0)->state, TaskState::kFailed);
  EXPECT_EQ(tracker.Find("worker", 0)->exit_code, 1);
  EXPECT_NE(tracker.Find("worker", 0)->message.find("exit code 1"), std::string::npos) << tracker.Find("worker", 0)->message;
  EXPECT_EQ(tracker.state(), AttemptState::kRunning);
  EXPECT_TRUE(tracker.TasksToStop().empty());
  EXPECT_EQ(tracker.Find("worker", 1)->state, TaskState::kRunning);
  ASSERT_TRUE(tracker.Exited("worker", 1, {0, 0}, "").ok());
  EXPECT_EQ(tracker.state(), AttemptState::kSucceeded);
  EXPECT_EQ(tracker.Find("worker", 0)->state, TaskState::kFailed) << "success does not rewrite the tolerated failure";
  EXPECT_EQ(tracker.Find("worker", 1)->state, TaskState::kSucceeded);
}

TEST(AttemptTracker, ServicesAreStoppedOnceWorkersFinish) {
  FakeClock clock;
  AttemptTracker tracker(Spec(1, 2), "job-1", 1, {}, clock);
  StartAll(tracker);
  ASSERT_TRUE(tracker.Exited("worker", 0, {0, 0}, "").ok());
  EXPECT_EQ(tracker.state(), AttemptState::kSucceeded);
  EXPECT_EQ(tracker.TasksToStop(), (std::vector<int>{1, 2}));
  ASSERT_TRUE(tracker.Exited("ps", 0, {143, 15}, "").ok());
  EXPECT_EQ(tracker.Find("ps", 0)->state, TaskState::kKilled);
  EXPECT_EQ(tracker.state(), AttemptState::kSucceeded);
}

TEST(AttemptTracker, SilentTasksAreLostAfterTheHeartbeatTimeout) {
  FakeClock clock;
  AttemptTracker tracker(Spec(2), "job-1", 1, {}, clock);
  StartAll(tracker);
  clock.Advance(6'000);
  ASSERT_TRUE(tracker.Heartbeat("worker", 0, {.progress = 0.5}).ok());
  clock.Advance(6'000);
  tracker.Tick();
  EXPECT_EQ(tracker.Find("worker", 0)->state, TaskState::kRunning);
  EXPECT_EQ(tracker.Find("worker", 0)->progress, 0.5);
  EXPECT_EQ(tracker.Find("worker", 1)->state, TaskState::kLost);
  EXPECT_EQ(tracker.state(), AttemptState::kFailed);
  EXPECT_NE(tracker.message().find("worker[1] was lost: no heartbeat"), std::string::npos) << tracker.message();
  auto keep_going = tracker.Heartbeat("worker", 0, {.progress = 0.6});
  ASSERT_TRUE(keep_going.ok());
  EXPECT_FALSE(*keep_going) << "once the attempt failed, heartbeats are told to stop";
}

// A heartbeat that shows the task alive but doing nothing: no progress, no metric, idle CPU.
ResourceSample Cpu(double percent) { return ResourceSample{1, percent, 1, 0, {}, {}}; }
protocol::HeartbeatRequest Idle() { return {.sample = Cpu(0.5)}; }

TEST(AttemptTracker, IdleTasksAreFlaggedHungAndActivityClearsTheFlag) {
  FakeClock clock;
  JobSpec spec = Spec(2);
  spec.timeouts.hang_ms = 30'000;
  AttemptTracker tracker(spec, "job-1", 1, {}, clock);
  StartAll(tracker);
  for (int beat = 0; beat < 7; ++beat) {  // 35 s of heartbeats: worker 0 busy, worker 1 idle
    clock.Advance(5'000);
    ASSERT_TRUE(tracker.Heartbeat("worker", 0, {.sample = Cpu(95.0)}).ok());
    ASSERT_TRUE(tracker.Heartbeat("worker", 1, Idle()).ok());
    tracker.Tick();
  }
  EXPECT_FALSE(tracker.Find("worker", 0)->hung);
  EXPECT_TRUE(tracker.Find("worker", 1)->hung);
  EXPECT_GT(tracker.Find("worker", 1)->hung_since_ms, 0);
  EXPECT_EQ(tracker.Find("worker", 1)->state, TaskState::kRunning) << "on_hang: flag only flags";
  EXPECT_EQ(tracker.state(), AttemptState::kRunning);
  EXPECT_TRUE(tracker.Snapshot().tasks[1].hung);

  std::vector<MetricPoint> metric{{1, 1, "loss", 0.5}};
  ASSERT_TRUE(tracker.Heartbeat("worker", 1, {.sample = Cpu(0.0), .metrics = metric}).ok());
  EXPECT_FALSE(tracker.Find("worker", 1)->hung) << "a metric line is activity";
  clock.Advance(20'000);
  ASSERT_TRUE(tracker.Heartbeat("worker", 1, {.progress = 0.3, .sample = Cpu(0.0)}).ok());
  clock.Advance(20'000);
  tracker.Tick();
  EXPECT_FALSE(tracker.Find("worker", 1)->hung) << "so is a progress change";
}

TEST(AttemptTracker, AnUploadLongerThanTheHangTimeoutIsNotAHang) {
  FakeClock clock;
  JobSpec spec = Spec(1);
  spec.timeouts.hang_ms = 4'000;
  spec.timeouts.hang_fails = true;
  AttemptTracker tracker(spec, "job-1", 1, {}, clock);
  StartAll(tracker);
  for (int beat = 0; beat < 10; ++beat) {  // 10 s of an agent uploading: no CPU sample, no progress
    clock.Advance(1'000);
    ASSERT_TRUE(tracker.Heartbeat("worker", 0, {.uploading = true}).ok());
    tracker.Tick();
  }
  EXPECT_FALSE(tracker.Find("worker", 0)->hung);
  EXPECT_EQ(tracker.state(), AttemptState::kRunning);
  for (int beat = 0; beat < 5; ++beat) {  // the same heartbeats without the upload: a hang
    clock.Advance(1'000);
    ASSERT_TRUE(tracker.Heartbeat("worker", 0, {}).ok());
    tracker.Tick();
  }
  EXPECT_EQ(tracker.state(), AttemptState::kFailed) << "the test can fail: without uploading it is a hang";
}

TEST(AttemptTracker, OnHangFailFailsTheTaskAndStopsIt) {
  FakeClock clock;
  JobSpec spec = Spec(2);
  spec.timeouts.hang_ms = 10'000;
  spec.timeouts.hang_fails = true;
  AttemptTracker tracker(spec, "job-1", 1, {}, clock);
  StartAll(tracker);
  for (int beat = 0; beat < 3; ++beat) {
    clock.Advance(4'000);
    ASSERT_TRUE(tracker.Heartbeat("worker", 0, {.progress = 0.1 * (beat + 1)}).ok());
    ASSERT_TRUE(tracker.Heartbeat("worker", 1, Idle()).ok());
    tracker.Tick();
  }
  EXPECT_EQ(tracker.Find("worker", 1)->state, TaskState::kFailed);
  EXPECT_EQ(tracker.state(), AttemptState::kFailed);
  EXPECT_NE(tracker.message().find("worker[1] failed: hung: no progress, metric or CPU use"), std::string::npos)
      << tracker.message();
  auto keep_going = tracker.Heartbeat("worker", 1, Idle());
  ASSERT_TRUE(keep_going.ok());
  EXPECT_FALSE(*keep_going);
  EXPECT_EQ(tracker.TasksToStop(), (std::vector<int>{0, 1})) << "the hung program is still running: stop it too";
}

TEST(AttemptTracker, HangDetectionOffWithZero) {
  FakeClock clock;
  JobSpec spec = Spec(1);
  spec.timeouts.hang_ms = 0;
  AttemptTracker tracker(spec, "job-1", 1, {}, clock);
  StartAll(tracker);
  for (int beat = 0; beat < 100; ++beat) {
    clock.Advance(5'000);
    ASSERT_TRUE(tracker.Heartbeat("worker", 0, Idle()).ok());
    tracker.Tick();
  }
  EXPECT_FALSE(tracker.Find("worker", 0)->hung);
}

TEST(AttemptTracker, AHeldSuccessWaitsForItsRelease) {
  FakeClock clock;
  AttemptTracker tracker(Spec(2), "job-1", 1, {}, clock);
  tracker.HoldSuccess();  // an MPI attempt: mpirun has the last word
  StartAll(tracker);
  ASSERT_TRUE(tracker.Exited("worker", 0, {0, 0}, "").ok());
  ASSERT_TRUE(tracker.Exited("worker", 1, {0, 0}, "").ok());
  EXPECT_EQ(tracker.state(), AttemptState::kRunning) << "every orted ended cleanly, but mpirun has not spoken";
  tracker.Fail("mpirun ended with exit code 3");
  EXPECT_EQ(tracker.state(), AttemptState::kFailed);

  AttemptTracker released(Spec(1), "job-1", 1, {}, clock);
  released.HoldSuccess();
  StartAll(released);
  ASSERT_TRUE(released.Exited("worker", 0, {0, 0}, "").ok());
  released.ReleaseSuccess();
  EXPECT_EQ(released.state(), AttemptState::kSucceeded);
}

TEST(AttemptTracker, MpirunsVerdictDecidesTheTasksThatExitedCleanly) {
  FakeClock clock;
  AttemptTracker tracker(Spec(3), "job-1", 1, {}, clock);
  tracker.HoldSuccess();
  StartAll(tracker);
  // rank 1 died; mpirun stopped the others, whose orteds all ended with 0
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(tracker.Exited("worker", i, {0, 0}, "").ok());
  EXPECT_EQ(tracker.Find("worker", 1)->state, TaskState::kRunning) << "no task succeeds before mpirun's verdict";
  clock.Advance(60'000);
  tracker.Tick();
  EXPECT_EQ(tracker.Find("worker", 0)->state, TaskState::kRunning) << "a task awaiting the verdict sends no heartbeat";
  tracker.FailTask(1, ExitInfo{3, 0}, "MPI rank 1 exited with code 3");
  EXPECT_EQ(tracker.state(), AttemptState::kFailed);
  EXPECT_EQ(tracker.Find("worker", 1)->state, TaskState::kFailed);
  EXPECT_EQ(tracker.Find("worker", 1)->message, "MPI rank 1 exited with code 3");
  EXPECT_EQ(tracker.Find("worker", 1)->exit_code, 3) << "the rank's exit, not its orted's";
  EXPECT_EQ(tracker.Find("worker", 0)->state, TaskState::kKilled);
  EXPECT_EQ(tracker.Find("worker", 2)->state, TaskState::kKilled);
  EXPECT_NE(tracker.message().find("task worker[1] failed: MPI rank 1"), std::string::npos) << tracker.message();

  AttemptTracker succeeded(Spec(2), "job-1", 1, {}, clock);
  succeeded.HoldSuccess();
  StartAll(succeeded);
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(succeeded.Exited("worker", i, {0, 0}, "").ok());
  succeeded.ReleaseSuccess();
  EXPECT_EQ(succeeded.Find("worker", 0)->state, TaskState::kSucceeded);
  EXPECT_EQ(succeeded.Find("worker", 1)->state, TaskState::kSucceeded);
}

TEST(MpiLaunch, MpirunsOutputNamesTheRankThatEndedTheJob) {
  JobSpec spec = Spec(3);
  spec.roles[0].nproc_per_node = 2;  // MPI ranks 0-1 on task 0, 2-3 on task 1, 4-5 on task 2
  auto by_code = FailedRankFromMpirunOutput(
      "[1,3]<stdout>:rank 3 dies\n-----\nmpirun detected that one or more processes exited with non-zero status, "
      "thus causing\nthe job to be terminated. The first process to do so was:\n\n  Process name: [[24835,1],3]\n"
      "  Exit code:    3\n-----\n",
      spec);
  ASSERT_TRUE(by_code.has_value());
  EXPECT_EQ(by_code->mpi_rank, 3);
  EXPECT_EQ(by_code->task_rank, 1);
  EXPECT_EQ(by_code->description, "MPI rank 3 exited with code 3");
  EXPECT_EQ(by_code->exit.exit_code, 3);
  auto by_signal = FailedRankFromMpirunOutput(
      "mpirun noticed that process rank 4 with PID 777 on node shoal-task-2 exited on signal 9 (Killed).\n", spec);
  ASSERT_TRUE(by_signal.has_value());
  EXPECT_EQ(by_signal->task_rank, 2);
  EXPECT_EQ(by_signal->description, "MPI rank 4 exited on signal 9 (Killed)");
  EXPECT_EQ(by_signal->exit.signal, 9);
  EXPECT_FALSE(FailedRankFromMpirunOutput("everything went fine\n", spec).has_value());
  EXPECT_FALSE(FailedRankFromMpirunOutput("[1,0]<stdout>:  Process name: [[1,1],2]\n", spec).has_value())
      << "a rank's own output cannot pose as mpirun's verdict";
  EXPECT_FALSE(FailedRankFromMpirunOutput("Process name: [[1,1],99]\n", spec).has_value()) << "no such rank";
  // found by fuzz_mpirun_output: a node name past the job's tasks
  auto far = FailedRankFromMpirunOutput("noticed that process rank 1 with PID 7 on node shoal-task-9 exited on signal 9\n", spec);
  ASSERT_TRUE(far.has_value());
  EXPECT_EQ(far->task_rank, 0) << "MPI rank 1 is in task 0's slots";
}

TEST(AttemptTracker, ContainersThatNeverRegisterTimeOut) {
  FakeClock clock;
  AttemptTracker tracker(Spec(1), "job-1", 1, {}, clock);
  tracker.Launched(0, "c0");
  clock.Advance(19'000);
  tracker.Tick();
  EXPECT_EQ(tracker.state(), AttemptState::kStarting);
  clock.Advance(2'000);
  tracker.Tick();
  EXPECT_EQ(tracker.state(), AttemptState::kFailed);
  EXPECT_NE(tracker.message().find("did not register"), std::string::npos);
}

TEST(AttemptTracker, JobTimeoutAndKill) {
  FakeClock clock;
  JobSpec spec = Spec(1);
  spec.timeouts.job_ms = 5'000;
  AttemptTracker timed(spec, "job-1", 1, {}, clock);
  StartAll(timed);
  clock.Advance(4'000);
  ASSERT_TRUE(timed.Heartbeat("worker", 0, {.progress = 0.1}).ok());
  clock.Advance(2'000);
  timed.Tick();
  EXPECT_EQ(timed.state(), AttemptState::kFailed);
  EXPECT_NE(timed.message().find("timeouts.job"), std::string::npos);

  AttemptTracker killed(Spec(2), "job-1", 1, {}, clock);
  killed.Launched(0, "c0");
  killed.Kill("killed by the user");
  EXPECT_EQ(killed.state(), AttemptState::kKilled);
  EXPECT_EQ(killed.tasks()[1].state, TaskState::kKilled) << "never-launched tasks end too";
  EXPECT_EQ(killed.TasksToStop(), std::vector<int>{0});
  killed.ContainerEnded("c0", {0, 15});
  EXPECT_TRUE(killed.Done());
  EXPECT_EQ(killed.tasks()[0].state, TaskState::kKilled);
}

TEST(AttemptTracker, APreemptedAttemptsProgramsHaveTheirGraceBeforeTheirContainersAreStopped) {
  FakeClock clock;
  AttemptTracker tracker(Spec(2), "job-1", 1, {}, clock);
  StartAll(tracker);
  tracker.Preempt({"for job-2", 30'000});
  EXPECT_EQ(tracker.state(), AttemptState::kKilled);
  EXPECT_EQ(tracker.message(), "preempted: for job-2");
  EXPECT_TRUE(tracker.TasksToStop().empty()) << "the agents are told through their heartbeats";
  EXPECT_FALSE(tracker.Heartbeat("worker", 0, {}).value());
  clock.Advance(10'000);
  EXPECT_EQ(tracker.PreemptNoticeNow(), (protocol::PreemptNotice{"for job-2", 20'000}));
  // worker[0] checkpointed and exited 0 in its grace: killed by the preemption all the same.
  ASSERT_TRUE(tracker.Exited("worker", 0, {0, 0}, "").ok());
  EXPECT_EQ(tracker.tasks()[0].state, TaskState::kKilled);
  EXPECT_EQ(tracker.tasks()[0].message, "preempted: for job-2");
  tracker.ContainerEnded("c0", {0, 0});
  // worker[1] is still there after the grace and the upload allowance: its container is stopped.
  clock.Advance(20'000 + protocol::kPreemptUploadAllowanceMs - 1);
  EXPECT_TRUE(tracker.TasksToStop().empty());
  clock.Advance(1);
  EXPECT_EQ(tracker.TasksToStop(), std::vector<int>{1});
  EXPECT_EQ(tracker.PreemptNoticeNow()->grace_ms, 0);

  AttemptTracker killed(Spec(1), "job-1", 1, {}, clock);
  StartAll(killed);
  killed.Preempt({"for job-3", 30'000});
  killed.Kill("killed by the user");
  EXPECT_EQ(killed.TasksToStop(), std::vector<int>{0}) << "a kill does not wait for the grace";
}

TEST(AttemptTracker, AContainerThatDiesFailsItsTask) {
  FakeClock clock;
  AttemptTracker tracker(Spec(2), "job-1", 1, {{0}, {1}}, clock);
  StartAll(tracker);
  EXPECT_EQ(tracker.Cluster("").tasks[1].gpus, std::vector<int>{1});
  tracker.ContainerEnded("c1", {137, 9});
  EXPECT_EQ(tracker.state(), AttemptState::kFailed);
  EXPECT_NE(tracker.message().find("container ended"), std::string::npos);
  EXPECT_FALSE(tracker.Register("worker", 7, "h", {1}).ok());
}

TEST(AttemptTracker, AContainerMayRegisterBeforeItsLaunchIsRecorded) {
  FakeClock clock;
  AttemptTracker tracker(Spec(2), "job-1", 1, {}, clock);
  ASSERT_TRUE(tracker.Register("worker", 0, "h", {1}).ok());
  tracker.Launched(0, "c0");
  EXPECT_EQ(tracker.tasks()[0].state, TaskState::kRegistered);
  tracker.Launched(1, "c1");
  ASSERT_TRUE(tracker.Register("worker", 1, "h", {2}).ok());
  EXPECT_TRUE(tracker.AllRegistered());
}

TEST(AttemptTracker, WaitingForTheOthersIsBoundByTheRegistrationTimeout) {
  FakeClock clock;
  AttemptTracker tracker(Spec(2), "job-1", 1, {}, clock);
  tracker.Launched(0, "c0");
  tracker.Launched(1, "c1");
  ASSERT_TRUE(tracker.Register("worker", 0, "h", {1}).ok());
  clock.Advance(15'000);  // past the heartbeat timeout, within the registration timeout
  tracker.Tick();
  EXPECT_EQ(tracker.state(), AttemptState::kStarting);
  clock.Advance(6'000);
  tracker.Tick();
  EXPECT_EQ(tracker.state(), AttemptState::kFailed);
  // Each is blamed on timeouts.register, for what it had not done (it once said
  // timeouts.heartbeat with the registration timeout's value).
  EXPECT_NE(tracker.tasks()[0].message.find("registered, but its program did not start within timeouts.register (20.0s)"),
            std::string::npos)
      << tracker.tasks()[0].message;
  EXPECT_NE(tracker.tasks()[1].message.find("did not register within timeouts.register (20.0s)"), std::string::npos)
      << tracker.tasks()[1].message;
}

TEST(AttemptTracker, HeartbeatsCarrySamplesAndMetricsToTheReport) {
  FakeClock clock;
  AttemptTracker tracker(Spec(2), "job-1", 1, {}, clock);
  StartAll(tracker);
  protocol::HeartbeatRequest beat;
  beat.sample = ResourceSample{5, 87.5, 1024, 0.2, {}, {}};
  beat.metrics = {MetricPoint{5, 10, "loss", 0.5}};
  beat.rtt_ms = 1.5;
  ASSERT_TRUE(tracker.Heartbeat("worker", 1, beat).ok());
  EXPECT_EQ(tracker.Find("worker", 1)->cpu, 87.5);
  EXPECT_EQ(tracker.Snapshot().tasks[1].heartbeat_rtt_ms, 1.5);
  std::vector<TaskSeries> series = tracker.TakeSeries();
  ASSERT_EQ(series.size(), 1u) << "only the task that sent something";
  EXPECT_EQ(series[0].index, 1);
  EXPECT_EQ(series[0].samples[0].rss, 1024);
  EXPECT_EQ(series[0].metrics[0].name, "loss");
  EXPECT_TRUE(tracker.TakeSeries().empty()) << "taken once";
  EXPECT_EQ(tracker.Snapshot().tasks[1].rss_peak, 1024) << "without a cgroup, the highest sample";
  beat.sample = ResourceSample{6, 10, 512, 0.3, {}, {}, 4096};
  ASSERT_TRUE(tracker.Heartbeat("worker", 1, beat).ok());
  EXPECT_EQ(tracker.Snapshot().tasks[1].rss, 512);
  EXPECT_EQ(tracker.Snapshot().tasks[1].rss_peak, 4096) << "the cgroup's peak, between samples too";
  beat.sample = ResourceSample{7, 10, 600, 0.3, {}, {}, {}};
  ASSERT_TRUE(tracker.Heartbeat("worker", 1, beat).ok());
  EXPECT_EQ(tracker.Snapshot().tasks[1].rss_peak, 4096) << "a peak never falls";
  tracker.TakeSeries();
  protocol::HeartbeatRequest flood;
  for (size_t i = 0; i < AttemptTracker::kMaxPending + 10; ++i) {
    flood.metrics.push_back(MetricPoint{static_cast<int64_t>(i), {}, "x", 1});
  }
  ASSERT_TRUE(tracker.Heartbeat("worker", 0, flood).ok());
  std::vector<TaskSeries> bounded = tracker.TakeSeries();
  EXPECT_EQ(bounded[0].metrics.size(), AttemptTracker::kMaxPending);
  EXPECT_EQ(bounded[0].metrics[0].t, 10) << "the oldest are dropped";
}

TEST(TaskState, Moves) {
  EXPECT_TRUE(CanMove(TaskState::kPending, TaskState::kLaunching));
  EXPECT_FALSE(CanMove(TaskState::kPending, TaskState::kRunning));
  EXPECT_FALSE(CanMove(TaskState::kSucceeded, TaskState::kFailed));
  EXPECT_TRUE(CanMove(TaskState::kRegistered, TaskState::kLost));
  EXPECT_FALSE(CanMove(TaskState::kRegistered, TaskState::kSucceeded));
  EXPECT_EQ(Parse<JobState>("QUEUED"), JobState::kQueued);
  EXPECT_EQ(Parse<JobState>("nope"), std::nullopt);
}

}  // namespace
}  // namespace shoal
