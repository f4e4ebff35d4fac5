#include <gtest/gtest.h>

#include "runtime/framework.h"

namespace shoal {
namespace {

ClusterView TwoWorkers() {
  ClusterView cluster;
  cluster.job_id = "job-7";
  cluster.attempt = 2;
  cluster.am_addr = "127.0.0.1:4000";
  cluster.tasks = {{"worker", 0, 0, "10.0.0.1", {29500}, {}}, {"worker", 1, 1, "10.0.0.2", {29501}, {1, 3}}};
  return cluster;
}

JobSpec Spec(const std::string& framework) {
  JobSpec spec;
  spec.name = "ddp";
  spec.framework = framework;
  spec.max_attempts = 3;
  spec.roles.push_back(RoleSpec{.name = "worker", .instances = 2, .command = "true"});
  return spec;
}

TEST(Environment, ShoalContract) {
  ClusterView cluster = TwoWorkers();
  EnvMap env = FindFramework("generic")->TaskEnvironment(Spec("generic"), cluster, cluster.tasks[1]);
  EXPECT_EQ(env["SHOAL_JOB_ID"], "job-7");
  EXPECT_EQ(env["SHOAL_ATTEMPT"], "2");
  EXPECT_EQ(env["SHOAL_ROLE"], "worker");
  EXPECT_EQ(env["SHOAL_INDEX"], "1");
  EXPECT_EQ(env["SHOAL_RANK"], "1");
  EXPECT_EQ(env["SHOAL_WORLD_SIZE"], "2");
  EXPECT_EQ(env["SHOAL_AM_ADDR"], "127.0.0.1:4000");
  EXPECT_EQ(env["SHOAL_PORT"], "29501");
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "1,3");
  EXPECT_EQ(env.count("MASTER_ADDR"), 0u) << "generic jobs get no torchrun variables";
}

TEST(Environment, PyTorchGetsTorchrunVariables) {
  ClusterView cluster = TwoWorkers();
  EnvMap env = FindFramework("pytorch")->TaskEnvironment(Spec("pytorch"), cluster, cluster.tasks[1]);
  EXPECT_EQ(env["MASTER_ADDR"], "10.0.0.1");
  EXPECT_EQ(env["MASTER_PORT"], "29500");
  EXPECT_EQ(env["RANK"], "1");
  EXPECT_EQ(env["WORLD_SIZE"], "2");
  EXPECT_EQ(env["LOCAL_RANK"], "0");
  EXPECT_EQ(env["LOCAL_WORLD_SIZE"], "1");
  EXPECT_EQ(env["GROUP_RANK"], "1");
  EXPECT_EQ(env["TORCHELASTIC_RESTART_COUNT"], "1");
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "1,3");
}

TEST(Registry, KnowsItsFrameworks) {
  EXPECT_EQ(KnownFrameworks(), (std::vector<std::string>{"generic", "pytorch"}));
  EXPECT_EQ(FindFramework("tensorflow"), nullptr);
}

}  // namespace
}  // namespace shoal
