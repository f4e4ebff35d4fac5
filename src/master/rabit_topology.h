// The Rabit link map: which workers of an XGBoost job connect to which. Rabit (XGBoost's
// collective) builds a binary tree for reductions and a ring for recovery; the tracker
// tells each worker its parent, its tree neighbours and its ring neighbours. This is the
// map xgboost/tracker.py computes (get_link_map), ranks relabelled so that the ring is
// 0, 1, ..., n-1.
// Thread-safety: pure function.
#pragma once

#include <map>
#include <utility>
#include <vector>

namespace shoal {

struct RabitLinkMap {
  std::map<int, std::vector<int>> tree;      // rank -> tree neighbours (parent and children)
  std::map<int, int> parent;                 // rank -> parent, -1 for the root
  std::map<int, std::pair<int, int>> ring;   // rank -> (previous, next)
};

RabitLinkMap ComputeRabitLinkMap(int workers);

}  // namespace shoal
