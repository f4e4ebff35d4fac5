#include "container/progress_line.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

TEST(ParseProgressLine, ReadsXLearningsFormat) {
  EXPECT_EQ(ParseProgressLine("reporter progress:0.42"), 0.42);
  EXPECT_EQ(ParseProgressLine("  reporter progress: 1 \r"), 1.0);
  EXPECT_EQ(ParseProgressLine("reporter progress:0"), 0.0);
}

TEST(ParseProgressLine, LeavesOtherLinesAlone) {
  for (const char* line : {"", "progress:0.5", "reporter progress:", "reporter progress:42",
                           "reporter progress:-0.1", "reporter progress:nan", "reporter progress:0.5x",
                           "reporter progress:inf", "Reporter progress:0.5", "xreporter progress:0.5"}) {
    EXPECT_EQ(ParseProgressLine(line), std::nullopt) << line;
  }
}

}  // namespace
}  // namespace shoal
