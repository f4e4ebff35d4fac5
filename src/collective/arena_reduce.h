// ReduceSlotsInOrder: the reduction under the algorithms that read each other's
// slots of a shared arena (single_host.h, host_leaders.h).
//
// Contract: dst = slot 0 (+) slot 1 (+) ... (+) slot n-1, over `elements` elements
// from byte `offset` of each of the arena's slots of `half`, where n is the arena's
// local_size() and dst already holds local rank `me`'s own values (as, for `me` of 2
// and up, does its slot). Local ranks 0 and 1 start from their own values: by
// commutativity a (+) b is b (+) a bit for bit, so every local rank that calls it
// combines the same operands in the same order and gets the same bits. kAverage
// accumulates like kSum; the caller divides.
// Thread-safety: reads shared memory the arena's protocol keeps still meanwhile.
#pragma once

#include <cstddef>

#include "collective/transport/shared_arena.h"

namespace shoal::collective {

void ReduceSlotsInOrder(const transport::SharedArena& arena, int half, int me, DataType type, ReduceOp op, char* dst,
                        size_t offset, size_t elements);

}  // namespace shoal::collective
