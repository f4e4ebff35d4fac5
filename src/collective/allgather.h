// Allgather: every rank contributes `count` elements and every rank receives all
// contributions, rank r's at block r of `out`.
//
// Contract: `in` holds count elements, `out` holds size * count; `in` may be block
// rank() of `out` (in place). Runs the allgather half of the pipelined ring,
// receiving straight into `out`.
// Thread-safety: one thread per communicator.
#pragma once

#include "collective/communicator.h"

namespace shoal::collective {

Status Allgather(Communicator& comm, const void* in, void* out, size_t count, DataType type);

}  // namespace shoal::collective
