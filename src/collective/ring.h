// The chunked, pipelined ring: the bandwidth-optimal engine under allreduce (large
// buffers), reduce-scatter and allgather.
//
// The buffer is cut into `size` segments. A reduce-scatter step sends one segment
// to the right neighbour while receiving another from the left and reducing it in;
// after size-1 steps each rank holds one fully reduced segment. An allgather step
// forwards segments around the ring, receiving straight into the buffer. Each step
// is split into chunks, and chunk c of step t+1 is sent as soon as chunk c of step t
// is reduced, with `pipeline_depth` receives posted ahead: the network moves chunk
// c+1 while the CPU reduces chunk c. Every rank moves 2(n-1)/n of the buffer.
//
// Contract: RunRing must be called inside Communicator::Run. The ring is
// `members` (global ranks in ring order; empty: every rank, in order), n of them,
// and this rank must be one; r below is this rank's position in it. Segment k covers
// elements [offsets[k], offsets[k+1]) of `data`. With shift s, position r owns
// segment (r + s + 1) mod n after the reduce-scatter steps, and must own it before
// the allgather steps. kAverage divides each owned segment by n once its reduction
// completes.
// Thread-safety: uses the communicator; one thread.
#pragma once

#include <vector>

#include "collective/communicator.h"

namespace shoal::collective {

struct RingPlan {
  char* data = nullptr;
  DataType type = DataType::kFloat32;
  ReduceOp op = ReduceOp::kSum;
  std::vector<size_t> offsets;  // size + 1 element offsets
  int shift = 0;
  bool reduce_scatter = true;
  bool allgather = true;
  std::vector<int> members;
};

Status RunRing(Communicator& comm, const RingPlan& plan);

// Offsets that split `count` elements into `parts` segments differing by at most one.
std::vector<size_t> BalancedOffsets(size_t count, int parts);
// Offsets of `parts` segments of `count` elements each.
std::vector<size_t> EqualOffsets(size_t count, int parts);

}  // namespace shoal::collective
