// ReduceScatter: the element-wise reduction of all ranks' buffers, cut into `size`
// equal blocks; rank r receives block r.
//
// Contract: `in` holds size * count elements, `out` receives count elements; they
// may not overlap. Runs the reduce-scatter half of the pipelined ring on a copy of
// `in` (scratch slot 1), so `in` is left unchanged.
// Thread-safety: one thread per communicator.
#pragma once

#include "collective/communicator.h"

namespace shoal::collective {

Status ReduceScatter(Communicator& comm, const void* in, void* out, size_t count, DataType type, ReduceOp op);

}  // namespace shoal::collective
