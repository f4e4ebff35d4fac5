// The hierarchical (two-dimensional) allreduce, for ranks spread over several hosts
// with several ranks each: shared memory within a host, the network across.
//
// With h hosts of l ranks each, the buffer is cut into l shards:
//   1. within each host, a ring reduce-scatter over shared memory leaves local
//      rank i with shard i reduced over its host;
//   2. the i-th ranks of all hosts run a ring allreduce of shard i across hosts
//      (l such rings run at once, one per local index, each over the network);
//   3. within each host, a ring allgather over shared memory spreads the shards.
// Each host sends 2(h-1)/h of the buffer across the network in total, spread over l
// links, against 2(n-1)/n per rank for a flat ring over every link.
//
// Contract: call inside Communicator::Run. Applies when HierarchicalLayout() finds
// at least two hosts, every host with the same number (>= 2) of ranks; otherwise
// the caller uses the flat ring. kAverage divides by the world size. Every rank
// gets bitwise-identical results (each shard is reduced once, by one rank, then
// copied).
// Thread-safety: one thread per communicator.
#pragma once

#include <vector>

#include "collective/communicator.h"

namespace shoal::collective {

struct HostLayout {
  // hosts[k] lists the ranks of host k, in rank order.
  std::vector<std::vector<int>> hosts;
  int host = 0;   // this rank's host
  int local = 0;  // this rank's index within it
};

// The layout when the hierarchical allreduce applies, or an empty one.
HostLayout HierarchicalLayout(const Communicator& comm);

Status HierarchicalAllreduce(Communicator& comm, const HostLayout& layout, char* data, size_t count, DataType type,
                             ReduceOp op);

}  // namespace shoal::collective
