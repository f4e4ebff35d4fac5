#include "data/split.h"

#include <gtest/gtest.h>

namespace shoal::data {
namespace {

TEST(SplitTest, WholeFilesBalanceBySize) {
  std::vector<storage::ObjectInfo> files{{"a", 100, 0}, {"b", 60, 0}, {"c", 50, 0}, {"d", 10, 0}};
  auto shares = SplitWholeFiles(files, 2);
  ASSERT_EQ(shares.size(), 2u);
  int64_t load0 = 0, load1 = 0;
  for (const auto& s : shares[0]) load0 += s.length;
  for (const auto& s : shares[1]) load1 += s.length;
  EXPECT_EQ(load0, 110);  // a + d
  EXPECT_EQ(load1, 110);  // b + c
  EXPECT_EQ(SplitWholeFiles(files, 5)[4].size(), 0u) << "more tasks than files: some get nothing";
}

TEST(SplitTest, RangesCoverEveryByteOnce) {
  std::vector<storage::ObjectInfo> files{{"a", 7, 0}, {"b", 0, 0}, {"c", 13, 0}};
  for (int n : {1, 2, 3, 7, 25}) {
    auto shares = SplitRanges(files, n);
    ASSERT_EQ(shares.size(), static_cast<size_t>(n));
    std::map<std::string, int64_t> next;  // per file: the next offset expected
    for (const auto& share : shares) {
      for (const auto& s : share) {
        EXPECT_EQ(s.offset, next[s.uri]) << n;
        next[s.uri] = s.offset + s.length;
      }
    }
    EXPECT_EQ(next["a"], 7);
    EXPECT_EQ(next["c"], 13);
  }
}

}  // namespace
}  // namespace shoal::data
