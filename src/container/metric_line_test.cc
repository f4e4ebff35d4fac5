#include "container/metric_line.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

TEST(ParseMetricLine, ReadsNamesValuesAndStep) {
  auto line = ParseMetricLine("reporter metric: loss=0.31 accuracy=0.87 step=120");
  ASSERT_TRUE(line);
  EXPECT_EQ(line->step, 120);
  ASSERT_EQ(line->values.size(), 2u);
  EXPECT_EQ(line->values[0].first, "loss");
  EXPECT_DOUBLE_EQ(line->values[0].second, 0.31);
  auto no_step = ParseMetricLine("  reporter metric:train/loss=1e-3");
  ASSERT_TRUE(no_step);
  EXPECT_FALSE(no_step->step);
  EXPECT_EQ(no_step->values[0].first, "train/loss");
}

TEST(ParseMetricLine, LeavesOtherLinesAlone) {
  for (const char* text : {"", "reporter metric:", "reporter metric: step=3", "reporter metric: loss",
                           "reporter metric: loss=abc", "reporter metric: loss=nan", "reporter metric: 1x=2",
                           "reporter metric: <b>=1", "reporter metric: loss=1 step=1.5", "reporter metric: loss=1 step=-1",
                           "reporter metric: a=1 step=1 step=2", "metric: loss=1", "reporter progress:0.5"}) {
    EXPECT_FALSE(ParseMetricLine(text)) << text;
  }
}

}  // namespace
}  // namespace shoal
