#include "backend/slurm/role_step.h"

#include <gtest/gtest.h>
#include <signal.h>

namespace shoal {
namespace {

ContainerLaunch Task(int index) {
  std::string base = "/jobs/job-10/attempt-1/worker-" + std::to_string(index);
  ContainerLaunch launch;
  launch.role = "worker";
  launch.index = index;
  launch.argv = {"/opt/shoal", "container", "--job", "job-10", "--index", std::to_string(index), "--log", base + ".log"};
  launch.env = {{"PATH", "/usr/bin"}, {"SHOAL_TASK_TOKEN", "token" + std::to_string(index)}};
  launch.agent_log = base + ".agent.log";
  return launch;
}

TEST(IndexTemplateTest, PutsThePlaceholderWhereTheIndexIs) {
  EXPECT_EQ(*IndexTemplate({"w-0.log", "w-1.log", "w-2.log"}), "w-%t.log");
  std::vector<std::string> many;
  for (int i = 0; i < 12; ++i) many.push_back("job-10/w" + std::to_string(i) + "0");
  EXPECT_EQ(*IndexTemplate(many), "job-10/w%t0") << "digits around the index stay";
  EXPECT_EQ(*IndexTemplate({"same", "same"}), "same");
  EXPECT_EQ(*IndexTemplate({"0", "1"}), "%t");
}

TEST(IndexTemplateTest, RefusesValuesThatDifferByMoreThanTheIndex) {
  EXPECT_FALSE(IndexTemplate({"a-0", "b-1"}).ok());
  EXPECT_FALSE(IndexTemplate({"w-1", "w-0"}).ok()) << "the index is the position";
  EXPECT_FALSE(IndexTemplate({"50%-0", "50%-1"}).ok()) << "a '%' could not be told from the placeholder";
  EXPECT_FALSE(IndexTemplate({}).ok());
}

TEST(ShareTest, TheTasksShareOneCommandLineEnvironmentAndLogPattern) {
  std::vector<ContainerLaunch> tasks = {Task(0), Task(1), Task(2)};
  auto argv = ShareArgv(tasks);
  ASSERT_TRUE(argv.ok()) << argv.status().ToString();
  EXPECT_EQ(*argv, (std::vector<std::string>{"/opt/shoal", "container", "--job", "job-10", "--index", "%t", "--log",
                                             "/jobs/job-10/attempt-1/worker-%t.log"}));
  auto env = ShareEnv(tasks, "SHOAL_TASK_TOKEN");
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  EXPECT_EQ(*env, (std::map<std::string, std::string>{{"PATH", "/usr/bin"}, {"SHOAL_TASK_TOKENS", "token0,token1,token2"}}));
  EXPECT_EQ(*ShareLog(tasks), "/jobs/job-10/attempt-1/worker-%t.agent.log");
}

TEST(ShareTest, TasksWhoseEnvironmentsDifferCannotShare) {
  std::vector<ContainerLaunch> tasks = {Task(0), Task(1)};
  tasks[1].env["EXTRA"] = "1";
  EXPECT_FALSE(ShareEnv(tasks, "SHOAL_TASK_TOKEN").ok());
  tasks = {Task(0), Task(1)};
  tasks[1].env.erase("SHOAL_TASK_TOKEN");
  EXPECT_FALSE(ShareEnv(tasks, "SHOAL_TASK_TOKEN").ok());
  tasks = {Task(0), Task(1)};
  tasks[1].argv.push_back("--more");
  EXPECT_FALSE(ShareArgv(tasks).ok());
}

TEST(ParseSrunTaskEndsTest, ReadsHowEachTaskEndedFromSrunsErrors) {
  // As srun 22.05 prints them (--quiet keeps its errors).
  auto ends = ParseSrunTaskEnds(
      "srun: error: node1: task 1: Killed\n"
      "srun: error: node2: tasks 0,2-3: Exited with exit code 3\n"
      "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.\n"
      "srun: error: node1: task 5: Terminated\n"
      "srun: error: node1: task 6: Out Of Memory\n"
      "srun: error: node1: task 7: Something new\n");
  std::vector<std::pair<int, ExitInfo>> expected = {{1, {0, SIGKILL}}, {0, {3, 0}},  {2, {3, 0}},  {3, {3, 0}},
                                                    {5, {0, SIGTERM}}, {6, {0, SIGKILL}}, {7, {255, 0}}};
  ASSERT_EQ(ends.size(), expected.size());
  for (size_t i = 0; i < ends.size(); ++i) {
    EXPECT_EQ(ends[i].first, expected[i].first) << i;
    EXPECT_EQ(ends[i].second.exit_code, expected[i].second.exit_code) << i;
    EXPECT_EQ(ends[i].second.signal, expected[i].second.signal) << i;
  }
}

TEST(ParseSrunTaskEndsTest, SkipsWhatItCannotRead) {
  EXPECT_TRUE(ParseSrunTaskEnds("srun: error: node1: task x: Killed\n").empty());
  EXPECT_TRUE(ParseSrunTaskEnds("srun: error: node1: tasks 3-1: Killed\n").empty());
  EXPECT_TRUE(ParseSrunTaskEnds("srun: error: node1: tasks 0-999999999: Killed\n").empty()) << "bounded";
  EXPECT_TRUE(ParseSrunTaskEnds("srun: error: node1: task 1: Exited with exit code x\n").empty());
  EXPECT_TRUE(ParseSrunTaskEnds("srun: error: Unable to create step\nrandom\n").empty());
}

TEST(ExpandNodeListTest, ExpandsRangesKeepingZeroPadding) {
  EXPECT_EQ(*ExpandNodeList("node1"), (std::vector<std::string>{"node1"}));
  EXPECT_EQ(*ExpandNodeList("node[1-3,7],gpu01"), (std::vector<std::string>{"node1", "node2", "node3", "node7", "gpu01"}));
  EXPECT_EQ(*ExpandNodeList("n[08-10]"), (std::vector<std::string>{"n08", "n09", "n10"}));
  EXPECT_EQ(*ExpandNodeList("r[1-2]n[1-2]"), (std::vector<std::string>{"r1n1", "r1n2", "r2n1", "r2n2"}));
}

TEST(ExpandNodeListTest, RefusesWhatIsNotANodeList) {
  for (const char* bad : {"", "a,,b", "n[1-", "n]1", "n[a-b]", "n[3-1]", "n[[1]]", "n[]", "n[1-99999999]",
                          "a[0-999]b[0-999]"}) {
    EXPECT_FALSE(ExpandNodeList(bad).ok()) << bad;
  }
}

TEST(NodeAddressesTest, RoundTrips) {
  std::map<std::string, std::string> addresses = {{"node1", "10.0.0.1"}, {"node2", "10.0.0.2"}};
  EXPECT_EQ(NodeAddresses(addresses), "node1=10.0.0.1,node2=10.0.0.2");
  EXPECT_EQ(ParseNodeAddresses(NodeAddresses(addresses)), addresses);
  EXPECT_EQ(ParseNodeAddresses("=x,y=,z,node1=a"), (std::map<std::string, std::string>{{"node1", "a"}}));
}

}  // namespace
}  // namespace shoal
