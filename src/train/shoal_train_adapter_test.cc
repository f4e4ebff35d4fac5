// The shoal-train framework adapter (src/runtime/shoal_train.cc): what each worker of a
// `shoal train` job needs to find the others.
#include <gtest/gtest.h>

#include "runtime/framework.h"
#include "spec/framework_roles.h"

namespace shoal {
namespace {

TEST(ShoalTrainAdapter, WorkersFindRankZerosRendezvousAndTheirNeighbours) {
  ClusterView cluster;
  cluster.job_id = "job-3";
  cluster.tasks = {{"worker", 0, 0, "10.0.0.1", {7001}, {}},
                   {"worker", 1, 1, "10.0.0.1", {7002}, {}},
                   {"worker", 2, 2, "10.0.0.2", {7003}, {}}};
  JobSpec spec;
  spec.framework = "shoal-train";
  const FrameworkAdapter* adapter = FindFramework("shoal-train");
  ASSERT_NE(adapter, nullptr);
  EnvMap env = adapter->TaskEnvironment(spec, cluster, cluster.tasks[1]);
  EXPECT_EQ(env["SHOAL_TRAIN_MASTER"], "10.0.0.1:7001");
  EXPECT_EQ(env["SHOAL_TRAIN_LOCAL_WORKERS"], "2");
  EXPECT_EQ(env["SHOAL_RANK"], "1");
  EXPECT_EQ(env["SHOAL_WORLD_SIZE"], "3");
  EXPECT_EQ(adapter->TaskEnvironment(spec, cluster, cluster.tasks[2])["SHOAL_TRAIN_LOCAL_WORKERS"], "1");
  const FrameworkRoles* roles = RolesOf("shoal-train");
  ASSERT_NE(roles, nullptr);
  ASSERT_EQ(roles->roles.size(), 1u);
  EXPECT_EQ(roles->roles[0].name, "worker");
}

}  // namespace
}  // namespace shoal
