// Broadcast: rank `root`'s buffer is copied to every other rank.
//
// Algorithm: up to options.small_allreduce_bytes a binomial tree (ceil(log2 n)
// hops); above it a chunked pipeline along the chain root, root+1, ..., so every
// link carries the buffer once and all links work at the same time.
// Contract: `data` holds count elements of `type` on every rank; in place.
// Thread-safety: one thread per communicator.
#pragma once

#include "collective/communicator.h"

namespace shoal::collective {

Status Broadcast(Communicator& comm, void* data, size_t count, DataType type, int root);

}  // namespace shoal::collective
