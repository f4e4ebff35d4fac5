#include "data/save_tracker.h"

#include <gtest/gtest.h>

namespace shoal::data {
namespace {

TEST(SaveTrackerTest, SavedWhenEveryOutputTaskReported) {
  SaveTracker saves({{"worker", 0}, {"worker", 1}});
  saves.Request({"20260101-000000"});
  EXPECT_EQ(saves.ForTask("worker", 1), Json::array({"20260101-000000"}));
  EXPECT_EQ(saves.Updates()[0]["state"], "uploading");
  saves.TaskReports("worker", 0, Json::array({{{"name", "20260101-000000"}, {"state", "saved"}, {"uri", "s3://b/m/saved-x"}}}));
  EXPECT_EQ(saves.Updates()[0]["state"], "uploading");
  EXPECT_TRUE(saves.ForTask("worker", 0).empty());
  saves.TaskReports("worker", 1, Json::array({{{"name", "20260101-000000"}, {"state", "saved"}, {"uri", "s3://b/m/saved-x"}}}));
  EXPECT_EQ(saves.Updates()[0]["state"], "saved");
  EXPECT_EQ(saves.Updates()[0]["uri"], "s3://b/m/saved-x");
  EXPECT_TRUE(saves.ForTask("ps", 0).empty()) << "tasks without outputs save nothing";
  saves.TaskReports("ps", 0, Json::array({{{"name", "20260101-000000"}, {"state", "saved"}, {"uri", ""}}}));
  EXPECT_EQ(saves.Updates()[0]["uri"], "s3://b/m/saved-x") << "and their reports do not count";
}

TEST(SaveTrackerTest, FailsWithoutOutputsOrWhenATaskEnds) {
  SaveTracker none({});
  none.Request({"a"});
  EXPECT_EQ(none.Updates()[0]["state"], "failed");
  EXPECT_NE(none.Updates()[0]["message"].get<std::string>().find("no outputs"), std::string::npos);
  SaveTracker one({{"worker", 0}});
  one.Request({"b"});
  one.TaskEnded("worker", 0);
  EXPECT_EQ(one.Updates()[0]["state"], "failed");
}

}  // namespace
}  // namespace shoal::data
