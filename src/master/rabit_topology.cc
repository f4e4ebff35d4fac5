#include "master/rabit_topology.h"

#include <algorithm>
#include <set>

namespace shoal {
namespace {

std::vector<int> Neighbours(int rank, int workers) {
  rank += 1;
  std::vector<int> out;
  if (rank > 1) out.push_back(rank / 2 - 1);
  if (rank * 2 - 1 < workers) out.push_back(rank * 2 - 1);
  if (rank * 2 < workers) out.push_back(rank * 2);
  return out;
}

// A ring that tends to follow the tree, starting from `rank`.
std::vector<int> ShareRing(const std::map<int, std::vector<int>>& tree, const std::map<int, int>& parent, int rank) {
  std::set<int> children(tree.at(rank).begin(), tree.at(rank).end());
  children.erase(parent.at(rank));
  std::vector<int> ring{rank};
  size_t count = 0;
  for (int child : children) {
    std::vector<int> sub = ShareRing(tree, parent, child);
    if (++count == children.size()) std::reverse(sub.begin(), sub.end());
    ring.insert(ring.end(), sub.begin(), sub.end());
  }
  return ring;
}

}  // namespace

RabitLinkMap ComputeRabitLinkMap(int workers) {
  std::map<int, std::vector<int>> tree;
  std::map<int, int> parent;
  for (int r = 0; r < workers; ++r) {
    tree[r] = Neighbours(r, workers);
    parent[r] = (r + 1) / 2 - 1;
  }
  std::vector<int> order = ShareRing(tree, parent, 0);
  std::map<int, std::pair<int, int>> ring;
  for (int r = 0; r < workers; ++r) {
    ring[order[r]] = {order[(r + workers - 1) % workers], order[(r + 1) % workers]};
  }
  // Relabel so that walking the ring from 0 gives 0, 1, 2, ...
  std::map<int, int> relabel{{0, 0}};
  int k = 0;
  for (int i = 0; i + 1 < workers; ++i) {
    k = ring[k].second;
    relabel[k] = i + 1;
  }
  RabitLinkMap map;
  for (const auto& [rank, links] : ring) map.ring[relabel[rank]] = {relabel[links.first], relabel[links.second]};
  for (const auto& [rank, links] : tree) {
    for (int n : links) map.tree[relabel[rank]].push_back(relabel[n]);
    if (links.empty()) map.tree[relabel[rank]];
  }
  for (const auto& [rank, p] : parent) map.parent[relabel[rank]] = rank == 0 ? -1 : relabel[p];
  return map;
}

}  // namespace shoal
