#include "data/save_tracker.h"

#include <gtest/gtest.h>

namespace shoal::data {
namespace {

TEST(SaveTrackerTest, SavedWhenEveryOutputTaskReported) {
  SaveTracker saves({{"worker", 0}, {"worker", 1}});
  saves.Request({"20260101-000000"});
  EXPECT_EQ(saves.ForTask("worker", 1), std::vector<std::string>{"20260101-000000"});
  EXPECT_EQ(saves.Updates()[0].state, SaveState::kUploading);
  saves.TaskReports("worker", 0, std::vector<protocol::SavedModelUpdate>{{"20260101-000000", SaveState::kSaved, "s3://b/m/saved-x", ""}});
  EXPECT_EQ(saves.Updates()[0].state, SaveState::kUploading);
  EXPECT_TRUE(saves.ForTask("worker", 0).empty());
  saves.TaskReports("worker", 1, std::vector<protocol::SavedModelUpdate>{{"20260101-000000", SaveState::kSaved, "s3://b/m/saved-x", ""}});
  EXPECT_EQ(saves.Updates()[0].state, SaveState::kSaved);
  EXPECT_EQ(saves.Updates()[0].uri, "s3://b/m/saved-x");
  EXPECT_TRUE(saves.ForTask("ps", 0).empty()) << "tasks without outputs save nothing";
  saves.TaskReports("ps", 0, std::vector<protocol::SavedModelUpdate>{{"20260101-000000", SaveState::kSaved, "", ""}});
  EXPECT_EQ(saves.Updates()[0].uri, "s3://b/m/saved-x") << "and their reports do not count";
}

TEST(SaveTrackerTest, FailsWithoutOutputsOrWhenATaskEnds) {
  SaveTracker none({});
  none.Request({"a"});
  EXPECT_EQ(none.Updates()[0].state, SaveState::kFailed);
  EXPECT_NE(none.Updates()[0].message.find("no outputs"), std::string::npos);
  SaveTracker one({{"worker", 0}});
  one.Request({"b"});
  one.TaskEnded("worker", 0);
  EXPECT_EQ(one.Updates()[0].state, SaveState::kFailed);
}

}  // namespace
}  // namespace shoal::data
