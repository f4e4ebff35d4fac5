// Recursive doubling allreduce: the latency-optimal algorithm for small buffers.
// In round k each rank swaps its whole buffer with the rank whose (folded) index
// differs in bit k and reduces, so ceil(log2 n) rounds finish the job. A world size
// that is not a power of two first folds its extra ranks into partners (one more
// round before and after).
//
// Contract: call inside Communicator::Run; `data` holds `count` elements. Both
// partners of a round compute a+b over the same operands, so every rank ends with
// bitwise-identical results. Uses scratch slot 0. RecursiveDoublingAmong runs it
// among the ranks of `group` only (this rank among them; the others do not call it),
// and divides a kAverage by the world size, as the whole communicator's would.
// Thread-safety: uses the communicator; one thread.
#pragma once

#include <vector>

#include "collective/communicator.h"

namespace shoal::collective {

Status RecursiveDoublingAllreduce(Communicator& comm, void* data, size_t count, DataType type, ReduceOp op);
Status RecursiveDoublingAmong(Communicator& comm, const std::vector<int>& group, void* data, size_t count,
                              DataType type, ReduceOp op);

}  // namespace shoal::collective
