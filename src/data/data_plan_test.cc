#include "data/data_plan.h"

#include <gtest/gtest.h>

#include "storage/mem/mem_storage.h"

namespace shoal::data {
namespace {

JobSpec TwoWorkersAndAPs() {
  JobSpec spec;
  spec.roles.push_back(RoleSpec{.name = "ps", .instances = 1, .command = "true", .service = true});
  spec.roles.push_back(RoleSpec{.name = "worker", .instances = 2, .command = "true"});
  return spec;
}

TEST(DataPlanTest, SplitsInputsAcrossNonServiceTasksAndNamesOutputFolders) {
  auto& mem = storage::MemStorage::Shared();
  mem.CreateBucket("plan");
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(mem.PutString("mem://plan/in/p" + std::to_string(i), std::string(10 + i, 'x')).ok());
  JobSpec spec = TwoWorkersAndAPs();
  spec.inputs.push_back({.name = "train", .uri = "mem://plan/in/p*", .mode = InputMode::kPlaceholder, .path = "train"});
  spec.inputs.push_back({.name = "feed", .uri = "mem://plan/in/", .mode = InputMode::kStream, .path = "feed"});
  spec.outputs.push_back({.name = "model", .path = "model", .uri = "mem://plan/out/"});
  spec.outputs.push_back({.name = "best", .path = "best", .uri = "mem://plan/best", .from = "worker[1]"});
  auto plan = DataPlan::Make(spec);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_TRUE(plan->InputsFor("ps", 0).empty()) << "services get no input by default";
  Json w0 = plan->InputsFor("worker", 0), w1 = plan->InputsFor("worker", 1);
  ASSERT_EQ(w0.size(), 2u);
  EXPECT_EQ(w0[0]["shards"].size() + w1[0]["shards"].size(), 4u) << "whole files, each to one task";
  EXPECT_EQ(w0[0]["base"], "mem://plan/in/");
  EXPECT_EQ(w0[1]["mode"], "stream");
  Json outputs = plan->OutputsFor("worker", 1);
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(outputs[0]["root"], "mem://plan/out");
  EXPECT_EQ(outputs[0]["suffix"], "/worker-1");
  EXPECT_EQ(outputs[1]["suffix"], "") << "from: the picked task commits to the URI itself";
  EXPECT_EQ(plan->OutputsFor("worker", 0).size(), 1u);
  EXPECT_EQ(plan->OutputTasks().size(), 2u);
}

TEST(DataPlanTest, ValidationNamesTheInputAndTheProblem) {
  JobSpec spec = TwoWorkersAndAPs();
  spec.inputs.push_back({.name = "train", .uri = "mem://plan/nothing-*"});
  Status s = ValidateData(spec);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("input \"train\""), std::string::npos) << s.message();
  spec.inputs[0].uri = "mem://no-bucket/x";
  EXPECT_NE(ValidateData(spec).message().find("\"no-bucket\""), std::string::npos);
  spec.inputs.clear();
  spec.outputs.push_back({.name = "model", .uri = "mem://no-bucket/out"});
  EXPECT_EQ(ValidateData(spec).code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace shoal::data
