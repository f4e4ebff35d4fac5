#include "spec/fit.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

JobSpec Job(int instances, double cpus, int64_t memory, int gpus) {
  JobSpec spec;
  RoleSpec role;
  role.name = "worker";
  role.instances = instances;
  role.resources = {cpus, memory, gpus};
  role.command = "true";
  spec.roles.push_back(role);
  return spec;
}

TEST(CheckFits, AcceptsWhatFitsAndNamesWhatDoesNot) {
  ClusterCapacity capacity{{4, 8LL << 30, 1}, {4, 8LL << 30, 1}};
  EXPECT_TRUE(CheckFits(Job(4, 1, 1LL << 30, 0), capacity).empty());

  auto too_big_task = CheckFits(Job(1, 8, 1LL << 30, 0), capacity);
  ASSERT_EQ(too_big_task.size(), 1u);
  EXPECT_EQ(too_big_task[0].field, "roles.worker.cpus");

  auto no_gpus = CheckFits(Job(1, 1, 1LL << 30, 2), capacity);
  ASSERT_EQ(no_gpus.size(), 1u);
  EXPECT_EQ(no_gpus[0].field, "roles.worker.gpus");

  auto too_many = CheckFits(Job(5, 1, 1LL << 30, 0), capacity);
  ASSERT_EQ(too_many.size(), 1u);
  EXPECT_EQ(too_many[0].field, "roles");
  EXPECT_NE(too_many[0].problem.find("5 CPUs"), std::string::npos) << too_many[0].problem;
}

}  // namespace
}  // namespace shoal
