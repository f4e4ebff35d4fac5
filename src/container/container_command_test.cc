#include "container/container_command.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace shoal {
namespace {

// The command line one Slurm step shares among a role's agents (backend/slurm/role_step.h).
Result<ContainerOptions> ParseShared(const std::map<std::string, std::string>& env) {
  std::vector<std::string> words = {"container", "--am", "10.0.0.1:7000", "--job", "job-4", "--attempt", "1",
                                    "--role", "worker", "--index", "%t", "--log", "/jobs/worker-%t.log",
                                    "--task-dir", "/jobs/worker-%t", "--node-addresses", "node1=10.0.0.11,node2=10.0.0.12",
                                    "--index-from-env", "SLURM_PROCID"};
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  return ParseContainerArgs(static_cast<int>(argv.size()), argv.data(), env);
}

TEST(ParseContainerArgsTest, AnAgentOfASharedStepFillsInItsIndexAddressAndToken) {
  auto options = ParseShared({{"SLURM_PROCID", "1"}, {"SLURMD_NODENAME", "node2"}, {"SHOAL_TASK_TOKENS", "t0,t1,t2"}});
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->index, 1);
  EXPECT_EQ(options->log_path, "/jobs/worker-1.log");
  EXPECT_EQ(options->task_dir, "/jobs/worker-1");
  EXPECT_EQ(options->host, "10.0.0.12");
  EXPECT_EQ(options->task_token, "t1");
}

TEST(ParseContainerArgsTest, ASharedStepWithoutItsIndexOrTokenIsRefusedNamingWhat) {
  auto no_index = ParseShared({{"SLURMD_NODENAME", "node1"}, {"SHOAL_TASK_TOKENS", "t0"}});
  ASSERT_FALSE(no_index.ok());
  EXPECT_NE(no_index.status().message().find("SLURM_PROCID"), std::string::npos) << no_index.status().message();
  EXPECT_FALSE(ParseShared({{"SLURM_PROCID", "1x"}, {"SLURMD_NODENAME", "node1"}}).ok());
  auto no_token = ParseShared({{"SLURM_PROCID", "3"}, {"SLURMD_NODENAME", "node1"}, {"SHOAL_TASK_TOKENS", "t0,t1"}});
  ASSERT_FALSE(no_token.ok());
  EXPECT_NE(no_token.status().message().find("no token for task 3"), std::string::npos) << no_token.status().message();
}

// The AM passes the job's timeouts.register: an agent keeps trying to register, and waits
// for the cluster, that long (a job of 1,000 tasks on a small machine needs more than 2m).
TEST(ParseContainerArgsTest, AnAgentWaitsForItsClusterAsLongAsTheJobsRegisterTimeout) {
  auto parse = [](std::vector<std::string> extra) {
    std::vector<std::string> words = {"container", "--am", "127.0.0.1:7000", "--job", "job-1", "--attempt", "1",
                                      "--role", "worker", "--index", "0", "--log", "/jobs/w.log", "--task-dir", "/jobs/w"};
    words.insert(words.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (std::string& word : words) argv.push_back(word.data());
    return ParseContainerArgs(static_cast<int>(argv.size()), argv.data(), {});
  };
  auto by_default = parse({});
  ASSERT_TRUE(by_default.ok()) << by_default.status().ToString();
  EXPECT_EQ(by_default->register_timeout_ms, 120'000);
  auto longer = parse({"--register-timeout-ms", "360000"});
  ASSERT_TRUE(longer.ok()) << longer.status().ToString();
  EXPECT_EQ(longer->register_timeout_ms, 360'000);
  EXPECT_FALSE(parse({"--register-timeout-ms", "0"}).ok());
}

}  // namespace
}  // namespace shoal
