#include "backend/slurm/slurm_launcher.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <set>

#include "backend/slurm/fake_slurm_commands.h"
#include "common/files.h"
#include "testing/scratch_directory.h"

namespace shoal {
namespace {

// Records what the launcher does to its srun processes; none is real.
class RecordedProcesses final : public ProcessLauncher {
 public:
  Result<pid_t> Spawn(const SpawnOptions& options) override {
    spawned.push_back(options.argv);
    return 4'200'000 + static_cast<pid_t>(spawned.size());
  }
  void Signal(pid_t pid, int sig) override { signals.emplace_back(pid, sig); }
  void SignalGroup(pid_t pgid, int sig) override { signals.emplace_back(pgid, sig); }
  std::optional<ExitInfo> TryWait(pid_t) override { return std::nullopt; }
  ExitInfo Wait(pid_t) override { return {}; }
  std::vector<std::vector<std::string>> spawned;
  std::vector<std::pair<pid_t, int>> signals;
};

class SlurmLauncherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    commands_.answers["scontrol"] = [](const std::vector<std::string>&) { return CommandOutput{0, "node1\n", ""}; };
    commands_.answers["sinfo"] = [](const std::vector<std::string>&) { return CommandOutput{0, "node1 10.0.0.11\n", ""}; };
    commands_.answers["scancel"] = [](const std::vector<std::string>&) { return CommandOutput{0, "", ""}; };
    auto launcher = SlurmContainerLauncher::FromEnvironment(
        {{"SHOAL_SLURM_ROLES", "worker"}, {"SLURM_JOB_NODELIST", "node1"}, {"SLURM_TASKS_PER_NODE", "1"},
         {"SLURMD_NODENAME", "node1"}, {"SLURM_JOB_ID", "812"}},
        commands_, processes_, clock_);
    ASSERT_TRUE(launcher.ok()) << launcher.status().ToString();
    launcher_ = std::move(*launcher);
    ContainerLaunch task;
    task.role = "worker";
    task.argv = {"/opt/shoal", "container"};
    auto id = launcher_->Launch(task);
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    id_ = *id;
  }
  void ListSteps(const std::string& lines) {
    commands_.answers["squeue"] = [lines](const std::vector<std::string>&) { return CommandOutput{0, lines, ""}; };
  }
  pid_t srun() const { return 4'200'001; }

  FakeClock clock_;
  FakeSlurmCommands commands_;
  RecordedProcesses processes_;
  std::unique_ptr<SlurmContainerLauncher> launcher_;
  std::string id_;
};

TEST_F(SlurmLauncherTest, StopSignalsTheTasksStepSoItsAgentStopsTheProgram) {
  ListSteps("812.batch batch\n812.0 shoal-worker-0\n");
  launcher_->Stop(id_, 60'000);
  EXPECT_EQ(commands_.calls.back(), (std::vector<std::string>{"scancel", "--quiet", "--signal=TERM", "812.0"}));
  EXPECT_TRUE(processes_.signals.empty()) << "srun would cancel the step: the program would get SIGKILL at once";
  launcher_->Stop(id_, 60'000);
  EXPECT_EQ(commands_.CountCalls("scancel"), 1) << "asked once";
  launcher_->Poll();
  EXPECT_TRUE(processes_.signals.empty()) << "the grace has not passed";
}

TEST_F(SlurmLauncherTest, AStepStillThereAfterTheGraceIsEndedThroughSrun) {
  ListSteps("812.0 shoal-worker-0\n");
  launcher_->Stop(id_, 0);
  launcher_->Poll();
  ASSERT_FALSE(processes_.signals.empty());
  EXPECT_EQ(processes_.signals.front(), std::make_pair(srun(), SIGTERM));
}

TEST_F(SlurmLauncherTest, AStepSlurmDoesNotListYetIsLeftToItsAgentForTheGrace) {
  ListSteps("812.batch batch\n");  // squeue lags srun: the step is not listed yet
  launcher_->Stop(id_, 60'000);
  EXPECT_EQ(commands_.CountCalls("scancel"), 0);
  launcher_->Poll();
  EXPECT_TRUE(processes_.signals.empty())
      << "srun would cancel the step: the program would get SIGKILL instead of its grace";
}

TEST_F(SlurmLauncherTest, AStepSlurmDoesNotListIsEndedThroughSrunWhenItsAgentDidNotEndIt) {
  ListSteps("812.batch batch\n");
  launcher_->Stop(id_, 0);
  launcher_->Poll();
  EXPECT_TRUE(processes_.signals.empty()) << "its agent has not yet had time to hear of the stop";
  clock_.SleepForMillis(3'000);
  launcher_->Poll();
  ASSERT_FALSE(processes_.signals.empty());
  EXPECT_EQ(processes_.signals.front(), std::make_pair(srun(), SIGTERM));
}

// A role of three tasks on two nodes: one step for all three.
class SharedStepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto launcher = SlurmContainerLauncher::FromEnvironment(
        {{"SHOAL_SLURM_ROLES", "worker"}, {"SLURM_JOB_NODELIST", "node[1-2]"}, {"SLURM_TASKS_PER_NODE", "2,1"},
         {"SLURMD_NODENAME", "node1"}, {"SLURM_JOB_ID", "812"},
         {"SHOAL_SLURM_NODE_ADDRESSES", "node1=10.0.0.11,node2=10.0.0.12"}},
        commands_, processes_, clock_);
    ASSERT_TRUE(launcher.ok()) << launcher.status().ToString();
    launcher_ = std::move(*launcher);
    std::vector<ContainerLaunch> tasks;
    for (int i = 0; i < 3; ++i) {
      ContainerLaunch task;
      task.role = "worker";
      task.index = i;
      task.workdir = dir_;
      task.argv = {"/opt/shoal", "container", "--index", std::to_string(i), "--log", dir_ + "/worker-" + std::to_string(i) + ".log"};
      task.env = {{"SHOAL_TASK_TOKEN", "secret" + std::to_string(i)}};
      task.agent_log = dir_ + "/worker-" + std::to_string(i) + ".agent.log";
      task.resources.cpus = 1;
      task.resources.memory_bytes = 256 << 20;
      tasks.push_back(task);
    }
    for (auto& id : launcher_->LaunchAll(tasks)) {
      ASSERT_TRUE(id.ok()) << id.status().ToString();
      ids_.push_back(*id);
    }
  }
  testing_support::ScratchDirectory scratch_{"shared-step"};
  std::string dir_ = scratch_.path();
  FakeClock clock_;
  FakeSlurmCommands commands_;
  RecordedProcesses processes_;
  std::unique_ptr<SlurmContainerLauncher> launcher_;
  std::vector<std::string> ids_;
};

TEST_F(SharedStepTest, OneSrunStartsTheRolesTasksEachWithItsOwnId) {
  EXPECT_EQ(commands_.calls.size(), 0u) << "neither scontrol nor sinfo before the steps start";
  ASSERT_EQ(processes_.spawned.size(), 1u);
  EXPECT_EQ(processes_.spawned[0],
            (std::vector<std::string>{"srun", "--ntasks=3", "--exact", "--quiet", "--kill-on-bad-exit=0",
                                      "--job-name=shoal-worker", "--cpus-per-task=1", "--mem-per-cpu=256M", "--gres=none",
                                      "--output=" + dir_ + "/worker-%t.agent.log", "/opt/shoal", "container", "--index",
                                      "%t", "--log", dir_ + "/worker-%t.log", "--node-addresses",
                                      "node1=10.0.0.11,node2=10.0.0.12", "--gpus-from-env", "--index-from-env",
                                      "SLURM_PROCID"}));
  ASSERT_EQ(ids_.size(), 3u);
  EXPECT_EQ(std::set<std::string>(ids_.begin(), ids_.end()).size(), 3u);
}

TEST_F(SharedStepTest, ATaskSrunSaysHasEndedIsReportedAloneAndTheRestWhenSrunEnds) {
  EXPECT_TRUE(launcher_->Poll().empty());
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/worker.srun.log", "srun: error: node1: task 1: Killed\nsrun: error: node2: ta").ok());
  auto ended = launcher_->Poll();
  ASSERT_EQ(ended.size(), 1u) << "a line still being written waits";
  EXPECT_EQ(ended[0].first, ids_[1]);
  EXPECT_EQ(ended[0].second.signal, SIGKILL);
  EXPECT_TRUE(launcher_->Poll().empty()) << "reported once";
}

TEST_F(SharedStepTest, StoppingATaskLeavesItToItsAgentThenEndsTheStepIfItIsLate) {
  launcher_->Stop(ids_[0], 1'000);
  launcher_->Stop(ids_[2], 1'000);
  launcher_->Poll();
  EXPECT_EQ(commands_.CountCalls("scancel"), 0) << "signalling the step would stop task 1 too";
  EXPECT_TRUE(processes_.signals.empty());
  clock_.SleepForMillis(4'000);
  launcher_->Poll();
  ASSERT_FALSE(processes_.signals.empty());
  EXPECT_EQ(processes_.signals.front(), std::make_pair(pid_t{4'200'001}, SIGTERM));
}

}  // namespace
}  // namespace shoal
