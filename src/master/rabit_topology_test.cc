#include "master/rabit_topology.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

TEST(RabitLinkMap, MatchesXgboostsTrackerForFourWorkers) {
  // The values xgboost/tracker.py's get_link_map(4) returns.
  RabitLinkMap map = ComputeRabitLinkMap(4);
  EXPECT_EQ(map.parent, (std::map<int, int>{{0, -1}, {1, 0}, {2, 1}, {3, 0}}));
  EXPECT_EQ(map.tree.at(0), (std::vector<int>{1, 3}));
  EXPECT_EQ(map.tree.at(1), (std::vector<int>{0, 2}));
  EXPECT_EQ(map.tree.at(2), (std::vector<int>{1}));
  EXPECT_EQ(map.tree.at(3), (std::vector<int>{0}));
  for (int r = 0; r < 4; ++r) EXPECT_EQ(map.ring.at(r), std::make_pair((r + 3) % 4, (r + 1) % 4));
}

TEST(RabitLinkMap, IsConsistentForManySizes) {
  for (int n = 1; n <= 33; ++n) {
    RabitLinkMap map = ComputeRabitLinkMap(n);
    ASSERT_EQ(static_cast<int>(map.tree.size()), n);
    int roots = 0;
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(map.ring.at(r).second, (r + 1) % n) << "the ring is 0, 1, ..., n-1";
      int parent = map.parent.at(r);
      if (parent == -1) {
        ++roots;
        continue;
      }
      const auto& up = map.tree.at(parent);
      EXPECT_NE(std::find(up.begin(), up.end(), r), up.end()) << "a parent links back to its child";
    }
    EXPECT_EQ(roots, 1);
  }
}

}  // namespace
}  // namespace shoal
