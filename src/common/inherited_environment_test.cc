#include "common/inherited_environment.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

TEST(InheritedEnvironment, KeepsTheSessionAndDropsEverythingElse) {
  std::map<std::string, std::string> from{
      {"PATH", "/usr/bin"},          {"HOME", "/root"},           {"LC_ALL", "C"},
      {"OPENBLAS_CORETYPE", "Haswell"}, {"AWS_ACCESS_KEY_ID", "k"}, {"SLURM_JOB_ID", "7"},
      {"SHOAL_HOME", "/h"},          {"SHOAL_S3_PARALLELISM", "2"},
      {"SHOAL_TOKEN", "user's"},     {"SHOAL_SERVER_TOKEN", "server's"}, {"SHOAL_ATTEMPT_TOKEN", "attempt's"},
      {"SHOAL_TASK_TOKEN", "task's"}, {"GITHUB_TOKEN", "x"},     {"PWD", "/tmp"},      {"DISPLAY", ":0"}};
  auto kept = InheritedEnvironment(from);
  for (const char* name : {"PATH", "HOME", "LC_ALL", "OPENBLAS_CORETYPE", "AWS_ACCESS_KEY_ID", "SLURM_JOB_ID",
                           "SHOAL_HOME", "SHOAL_S3_PARALLELISM"}) {
    EXPECT_EQ(kept.count(name), 1u) << name << " is inherited";
  }
  for (const char* name : {"SHOAL_TOKEN", "SHOAL_SERVER_TOKEN", "SHOAL_ATTEMPT_TOKEN", "SHOAL_TASK_TOKEN", "GITHUB_TOKEN",
                           "PWD", "DISPLAY"}) {
    EXPECT_EQ(kept.count(name), 0u) << name << " is not";
  }
}

}  // namespace
}  // namespace shoal
