#include "server/series_store.h"

#include <gtest/gtest.h>

#include "testing/scratch_directory.h"

namespace shoal {
namespace {

class SeriesStoreTest : public ::testing::Test {
 protected:
  static TaskSeries Task(const std::string& role, int index, int64_t first_t, int samples, int points) {
    TaskSeries task{role, index, {}, {}};
    for (int i = 0; i < samples; ++i) task.samples.push_back(ResourceSample{first_t + i, 50.0, 1000 + i, 0.1, {}, 2.0});
    for (int i = 0; i < points; ++i) task.metrics.push_back(MetricPoint{first_t + i, i, "loss", 1.0 / (i + 1)});
    return task;
  }

  testing_support::ScratchDirectory scratch_{"series"};
  std::string path_ = scratch_ / "series.db";
};

TEST_F(SeriesStoreTest, AppendsPerJobAttemptAndTaskAndLoadsWithACursor) {
  auto store = SeriesStore::Open(path_);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_TRUE((*store)->Append(1, 1, {Task("worker", 0, 100, 2, 3), Task("worker", 1, 100, 1, 0)}).ok());
  ASSERT_TRUE((*store)->Append(1, 2, {Task("worker", 0, 500, 4, 4)}).ok());
  ASSERT_TRUE((*store)->Append(2, 1, {Task("ps", 0, 900, 5, 5)}).ok());

  auto first = (*store)->Load(1, 1);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->tasks.size(), 2u);
  EXPECT_EQ(first->tasks[0].samples.size(), 2u);
  EXPECT_EQ(first->tasks[0].metrics.size(), 3u);
  EXPECT_EQ(first->tasks[1].index, 1);
  EXPECT_EQ(*first->tasks[0].samples[0].gpu_mem, 2.0);
  EXPECT_FALSE(first->tasks[0].samples[0].gpu_util.has_value());
  EXPECT_EQ(*first->tasks[0].metrics[2].step, 2);

  ASSERT_TRUE((*store)->Append(1, 1, {Task("worker", 0, 200, 1, 1)}).ok());
  auto newer = (*store)->Load(1, 1, first->next);
  ASSERT_TRUE(newer.ok());
  ASSERT_EQ(newer->tasks.size(), 1u) << "only what arrived after the cursor";
  EXPECT_EQ(newer->tasks[0].samples.size(), 1u);
  EXPECT_EQ(newer->tasks[0].samples[0].t, 200);
  auto same = (*store)->Load(1, 1, newer->next);
  ASSERT_TRUE(same.ok());
  EXPECT_TRUE(same->tasks.empty());
  EXPECT_EQ((*store)->Load(1, 2).value().tasks[0].samples.size(), 4u);
}

TEST_F(SeriesStoreTest, KeepsOnlyTheNewestPointsOfATask) {
  {
    auto store = SeriesStore::Open(path_, SeriesLimits{.max_samples = 10, .max_points = 5});
    ASSERT_TRUE(store.ok());
    for (int batch = 0; batch < 4; ++batch) {
      ASSERT_TRUE((*store)->Append(1, 1, {Task("worker", 0, batch * 100, 4, 3), Task("worker", 1, 0, 1, 1)}).ok());
    }
    auto loaded = (*store)->Load(1, 1).value();
    ASSERT_EQ(loaded.tasks.size(), 2u);
    ASSERT_EQ(loaded.tasks[0].samples.size(), 10u);
    EXPECT_EQ(loaded.tasks[0].samples.front().t, 102) << "the oldest went first";
    EXPECT_EQ(loaded.tasks[0].samples.back().t, 303);
    EXPECT_EQ(loaded.tasks[0].metrics.size(), 5u);
    EXPECT_EQ(loaded.tasks[1].samples.size(), 4u) << "each task has its own cap";
  }
  // A restarted server counts the rows again before trimming.
  auto store = SeriesStore::Open(path_, SeriesLimits{.max_samples = 10, .max_points = 5});
  ASSERT_TRUE((*store)->Append(1, 1, {Task("worker", 0, 1000, 2, 0)}).ok());
  auto loaded = (*store)->Load(1, 1).value();
  EXPECT_EQ(loaded.tasks[0].samples.size(), 10u);
  EXPECT_EQ(loaded.tasks[0].samples.back().t, 1001);
}

}  // namespace
}  // namespace shoal
