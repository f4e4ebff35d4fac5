// NameSearchTotals: totals follow added jobs, are forgotten when the history changed
// behind them, and at most kMaxTexts are kept, the oldest forgotten first.
#include "server/name_search_totals.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

TEST(NameSearchTotals, AnAddedJobCountsIntoEveryTotalItsNameMatches) {
  NameSearchTotals totals;
  totals.Remember("train", 10, 100);
  totals.Remember("ddp", 3, 100);
  totals.Remember("", 100, 100);
  totals.Added("train_ddp");
  totals.Added("Train");  // case-sensitive, as instr()
  EXPECT_EQ(totals.Find("train", 102), 11);
  EXPECT_EQ(totals.Find("ddp", 102), 4);
  EXPECT_EQ(totals.Find("", 102), 102);
  EXPECT_EQ(totals.Find("bert", 102), std::nullopt);
}

TEST(NameSearchTotals, AHistoryOfAnotherSizeForgetsEveryTotal) {
  NameSearchTotals totals;
  totals.Remember("train", 10, 100);
  EXPECT_EQ(totals.Find("train", 101), std::nullopt);  // another writer added a job
  EXPECT_EQ(totals.Find("train", 100), std::nullopt);  // and it stays forgotten
  totals.Remember("train", 7, 90);
  totals.Forget();
  totals.Added("train");
  EXPECT_EQ(totals.Find("train", 91), std::nullopt);
}

TEST(NameSearchTotals, KeepsAtMostKMaxTextsForgettingTheOldest) {
  NameSearchTotals totals;
  for (size_t i = 0; i <= NameSearchTotals::kMaxTexts; ++i) totals.Remember("n" + std::to_string(i), i, 5);
  EXPECT_EQ(totals.Find("n0", 5), std::nullopt);
  EXPECT_EQ(totals.Find("n1", 5), 1);
  EXPECT_EQ(totals.Find("n" + std::to_string(NameSearchTotals::kMaxTexts), 5),
            static_cast<int64_t>(NameSearchTotals::kMaxTexts));
}

}  // namespace
}  // namespace shoal
