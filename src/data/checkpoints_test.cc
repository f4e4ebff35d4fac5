#include "data/checkpoints.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "common/files.h"
#include "data/scratch_folder.h"
#include "storage/mem/mem_storage.h"

namespace shoal::data {
namespace {

storage::MemStorage& Bucket(const std::string& name) {
  auto& mem = storage::MemStorage::Shared();
  mem.CreateBucket(name);
  return mem;
}

void PutRound(const std::string& task_uri, int round, bool complete, const std::string& contents = "x") {
  auto& mem = storage::MemStorage::Shared();
  std::string uri = task_uri + "/" + RoundName(round);
  ASSERT_TRUE(mem.PutString(uri + "/state.pt", contents).ok());
  if (complete) ASSERT_TRUE(mem.PutString(uri + "/_SUCCESS", "state.pt\n").ok());
}

TEST(CheckpointsTest, ListsEachTasksCompleteAndPresentRounds) {
  Bucket("ck-list");
  PutRound("mem://ck-list/c/job-1/worker-0", 1, true);
  PutRound("mem://ck-list/c/job-1/worker-0", 2, false);
  PutRound("mem://ck-list/c/job-1/worker-1", 1, true);
  PutRound("mem://ck-list/c/job-10/worker-0", 7, true);  // another job: not under job-1/
  auto rounds = ListRounds(storage::MemStorage::Shared(), "mem://ck-list/c/job-1");
  ASSERT_TRUE(rounds.ok()) << rounds.status().ToString();
  ASSERT_EQ(rounds->size(), 2u);
  EXPECT_EQ(rounds->at("worker-0").complete, (std::set<int>{1}));
  EXPECT_EQ(rounds->at("worker-0").present, (std::set<int>{1, 2}));
  EXPECT_EQ(rounds->at("worker-1").complete, (std::set<int>{1}));
}

TEST(CheckpointsTest, TheCommonRoundIsTheNewestEveryTaskHasComplete) {
  struct Case {
    const char* name;
    JobRounds rounds;
    int expected;
  };
  std::vector<Case> cases = {
      {"none", {}, 0},
      {"one task", {{"w-0", {{1, 2, 3}, {1, 2, 3, 4}}}}, 3},
      {"one behind", {{"w-0", {{3, 4, 5}, {}}}, {"w-1", {{3, 4}, {}}}}, 4},
      {"a task with nothing complete", {{"w-0", {{1, 2}, {}}}, {"w-1", {{}, {1}}}}, 0},
      {"no round in common", {{"w-0", {{5}, {}}}, {"w-1", {{4}, {}}}}, 0},
      {"a gap", {{"w-0", {{2, 4, 6}, {}}}, {"w-1", {{2, 3, 6}, {}}}}, 6},
  };
  for (const auto& c : cases) EXPECT_EQ(CommonRound(c.rounds), c.expected) << c.name;
}

TEST(CheckpointsTest, PrunesBeyondKeepAndUnfinishedOlderRounds) {
  EXPECT_EQ(RoundsToPrune({{1, 2, 3, 4}, {1, 2, 3, 4}}, 2), (std::vector<int>{1, 2}));
  EXPECT_EQ(RoundsToPrune({{1, 3}, {1, 2, 3, 4}}, 3), (std::vector<int>{2}));  // 4 is newer: being written
  EXPECT_EQ(RoundsToPrune({{}, {1, 2}}, 1), (std::vector<int>{}));
  EXPECT_EQ(RoundsToPrune({{5}, {5}}, 1), (std::vector<int>{}));
}

TEST(CheckpointsTest, PrepareResumePicksTheCommonRoundAndDeletesWhatCameAfter) {
  auto& mem = Bucket("ck-resume");
  PutRound("mem://ck-resume/c/job-3/worker-0", 1, true);
  PutRound("mem://ck-resume/c/job-3/worker-0", 2, true);
  PutRound("mem://ck-resume/c/job-3/worker-1", 1, true);
  PutRound("mem://ck-resume/c/job-3/worker-1", 2, false);  // cut short by the preemption
  JobSpec spec;
  spec.roles.push_back(RoleSpec{.name = "worker", .instances = 2});
  spec.checkpoint = CheckpointSpec{"ckpt", "mem://ck-resume/c", 3};
  auto resume = PrepareResume(spec, "job-3");
  ASSERT_TRUE(resume.ok()) << resume.status().ToString();
  EXPECT_EQ(*resume, 1);
  auto rounds = ListRounds(mem, "mem://ck-resume/c/job-3");
  ASSERT_TRUE(rounds.ok());
  EXPECT_EQ(rounds->at("worker-0").present, (std::set<int>{1}));
  EXPECT_EQ(rounds->at("worker-1").present, (std::set<int>{1}));
}

TEST(CheckpointsTest, AMarkedFolderBecomesTheNextRoundAndIsRestoredWhole) {
  auto& mem = Bucket("ck-task");
  ScratchFolder task("ck-task");
  std::string folder = task.path() + "/ckpt";
  const std::string uri = "mem://ck-task/c/job-4/worker-0";
  {
    TaskCheckpoints checkpoints({"ckpt", "mem://ck-task/c", 2}, uri, folder, task.path() + "/.staging");
    std::map<std::string, std::string> env;
    ASSERT_TRUE(checkpoints.Restore(0, env).ok());
    EXPECT_EQ(env["SHOAL_CHECKPOINT_DIR"], folder);
    for (int step = 1; step <= 3; ++step) {
      task.Write("ckpt/model.pt", "step " + std::to_string(step));
      task.Write("ckpt/opt/state.pt", "opt " + std::to_string(step));
      task.Write("ckpt/_COMPLETE", "");
      checkpoints.Poll();
      // The marker goes once the copy is taken: the program may write the next one.
      EXPECT_FALSE(std::filesystem::exists(env["SHOAL_CHECKPOINT_MARKER"]));
      ASSERT_TRUE(checkpoints.Finish().ok());
    }
    std::vector<std::string> notes = checkpoints.TakeNotes();
    ASSERT_EQ(notes.size(), 3u);
    EXPECT_NE(notes[2].find("checkpoint round 3 uploaded to " + uri + "/00000003"), std::string::npos) << notes[2];
  }
  auto rounds = ListRounds(mem, "mem://ck-task/c/job-4");
  ASSERT_TRUE(rounds.ok());
  EXPECT_EQ(rounds->at("worker-0").complete, (std::set<int>{2, 3}));  // keep: 2
  EXPECT_EQ(rounds->at("worker-0").present, (std::set<int>{2, 3}));
  EXPECT_FALSE(mem.Stat(uri + "/00000003/_COMPLETE").ok());  // the marker is not part of it

  ScratchFolder next("ck-task-2");
  TaskCheckpoints resumed({"ckpt", "mem://ck-task/c", 2}, uri, next.path() + "/ckpt", next.path() + "/.staging");
  std::map<std::string, std::string> env;
  ASSERT_TRUE(resumed.Restore(3, env).ok());
  EXPECT_EQ(ReadFile(next.path() + "/ckpt/model.pt").value(), "step 3");
  EXPECT_EQ(ReadFile(next.path() + "/ckpt/opt/state.pt").value(), "opt 3");
  EXPECT_FALSE(std::filesystem::exists(next.path() + "/ckpt/_SUCCESS"));
  // The next round after a restore of round 3 is round 4.
  next.Write("ckpt/_COMPLETE", "");
  ASSERT_TRUE(resumed.Finish().ok());
  auto after = ListRounds(mem, "mem://ck-task/c/job-4");
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->at("worker-0").complete, (std::set<int>{3, 4}));
}

TEST(CheckpointsTest, ARestoreSkipsFolderMarkersAndRefusesANameThatWouldLeaveTheFolder) {
  auto& mem = Bucket("ck-names");
  const std::string uri = "mem://ck-names/c/job-5/worker-0";
  PutRound(uri, 1, true, "kept");
  ASSERT_TRUE(mem.PutString(uri + "/00000001/opt/", "").ok());  // a console's folder marker
  ScratchFolder task("ck-names");
  std::map<std::string, std::string> env;
  TaskCheckpoints marked({"ckpt", "mem://ck-names/c", 2}, uri, task.path() + "/ckpt", task.path() + "/.staging");
  ASSERT_TRUE(marked.Restore(1, env).ok());
  EXPECT_EQ(ReadFile(task.path() + "/ckpt/state.pt").value(), "kept");

  ASSERT_TRUE(mem.PutString(uri + "/00000001/../../escaped", "out").ok());
  ScratchFolder next("ck-names-2");
  TaskCheckpoints climbing({"ckpt", "mem://ck-names/c", 2}, uri, next.path() + "/deep/ckpt", next.path() + "/.staging");
  Status restored = climbing.Restore(1, env);
  EXPECT_EQ(restored.code(), StatusCode::kInvalidArgument) << restored.ToString();
  EXPECT_NE(restored.message().find("00000001/../../escaped"), std::string::npos) << restored.message();
  EXPECT_FALSE(std::filesystem::exists(next.path() + "/escaped")) << "nothing written outside the folder";
}

TEST(CheckpointsTest, FinishTakesAMarkWrittenAfterTheProgramsLastPoll) {
  auto& mem = Bucket("ck-finish");
  ScratchFolder task("ck-finish");
  const std::string uri = "mem://ck-finish/c/job-5/worker-0";
  TaskCheckpoints checkpoints({"ckpt", "mem://ck-finish/c", 3}, uri, task.path() + "/ckpt", task.path() + "/.staging");
  std::map<std::string, std::string> env;
  ASSERT_TRUE(checkpoints.Restore(0, env).ok());
  task.Write("ckpt/model.pt", "in the grace period");
  // Not marked: nothing is uploaded, however the program ended.
  ASSERT_TRUE(checkpoints.Finish().ok());
  EXPECT_FALSE(mem.Stat(uri + "/00000001/_SUCCESS").ok());
  task.Write("ckpt/_COMPLETE", "");
  ASSERT_TRUE(checkpoints.Finish().ok());
  EXPECT_TRUE(mem.Stat(uri + "/00000001/_SUCCESS").ok());
  EXPECT_EQ(mem.ReadRange(uri + "/00000001/model.pt", 0, 100).value(), "in the grace period");
}

}  // namespace
}  // namespace shoal::data
