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
  EXPECT_EQ(outputs[0]["commit"], true);
  EXPECT_EQ(outputs[1]["commit"], true);
  EXPECT_EQ(plan->OutputTasks().size(), 2u);
}

TEST(DataPlanTest, EveryTaskGetsEveryOutputFolderAndOnlyThePickedOnesCommit) {
  JobSpec spec = TwoWorkersAndAPs();
  spec.outputs.push_back({.name = "model", .path = "model", .uri = "mem://plan/out/"});
  spec.outputs.push_back({.name = "best", .path = "best", .uri = "mem://plan/best", .from = "worker[1]"});
  auto plan = DataPlan::Make(spec);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  for (const auto& [role, index] : std::vector<std::pair<std::string, int>>{{"ps", 0}, {"worker", 0}, {"worker", 1}}) {
    Json outputs = plan->OutputsFor(role, index);
    ASSERT_EQ(outputs.size(), 2u) << role << index << ": a folder for each output, so its variable is set";
    EXPECT_EQ(outputs[0]["name"], "model");
    EXPECT_EQ(outputs[1]["name"], "best");
    EXPECT_EQ(outputs[0]["commit"], role == "worker") << "a service role's folder is scratch";
    EXPECT_EQ(outputs[1]["commit"], role == "worker" && index == 1) << "only the task `from` picks commits";
  }
  EXPECT_EQ(plan->OutputTasks(), (std::vector<std::pair<std::string, int>>{{"worker", 0}, {"worker", 1}}));
  EXPECT_EQ(SavedModelFolders(spec, "20260101-000000"),
            (std::vector<std::string>{"mem://plan/out/saved-20260101-000000/", "mem://plan/best/saved-20260101-000000/"}));
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

TEST(DataPlanTest, ADownloadInputWhoseObjectsCannotBeLocalFilesIsRefusedAndOthersTakeThem) {
  auto& mem = storage::MemStorage::Shared();
  mem.CreateBucket("names");
  ASSERT_TRUE(mem.PutString("mem://names/in/a/../../escape", "x").ok());
  ASSERT_TRUE(mem.PutString("mem://names/in/ok", "y").ok());
  JobSpec spec = TwoWorkersAndAPs();
  spec.inputs.push_back({.name = "train", .uri = "mem://names/in/", .path = "train"});
  Status checked = ValidateData(spec);
  EXPECT_EQ(checked.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(checked.message().find("input \"train\""), std::string::npos) << checked.message();
  EXPECT_NE(checked.message().find("mem://names/in/a/../../escape"), std::string::npos) << checked.message();
  EXPECT_EQ(DataPlan::Make(spec).status().code(), StatusCode::kInvalidArgument)
      << "the AM checks again: the bucket may have changed since the submit";
  spec.inputs[0].mode = InputMode::kPlaceholder;
  EXPECT_TRUE(ValidateData(spec).ok()) << "a placeholder input only names its objects";
  auto plan = DataPlan::Make(spec);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
}

}  // namespace
}  // namespace shoal::data
