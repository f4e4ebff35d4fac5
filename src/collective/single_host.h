// The single-host allreduce: when every rank of a communicator shares one host,
// ranks reduce straight from each other's slots of the transport's shared arena
// (transport/shared_arena.h) instead of passing messages. Its cost does not grow
// with the number of dependent steps: one or two barriers per piece, where the ring
// waits 2(n-1) times, each time for a rank that may be off its core.
//
// The buffer is cut into pieces of at most one slot. For each piece, in the arena's
// next half:
//   flat (the whole buffer is at most Options::flat_allreduce_bytes):
//     every rank copies the piece into its slot; barrier; every rank reduces all
//     slots, in rank order, into its buffer. One barrier; each rank reads n slots.
//   sliced (larger):
//     every rank copies the piece, less its own slice, into its slot; barrier; rank r reduces slice r of
//     all slots in rank order, into its buffer and into slice r of its own slot;
//     barrier; every rank copies each other slice from its owner's slot. Two
//     barriers; each rank reads about two pieces' worth.
// Only the owner writes a slice of its slot, and only after every rank copied its
// piece in, so no rank reads a slice while it is written.
//
// Contract: call inside Communicator::Run, only when every rank is local: comm.arena()
// is not null and its local_size() is comm.size().
// Every rank gets bitwise-identical results: flat ranks combine the same operands in
// the same order, and each slice of the sliced form is reduced once, by its owner.
// kAverage divides the final sum once. Failure and timeouts are the arena
// barrier's (a rank that dies is named by the others).
// Thread-safety: one thread per communicator.
#pragma once

#include "collective/communicator.h"

namespace shoal::collective {

Status SingleHostAllreduce(Communicator& comm, char* data, size_t count, DataType type, ReduceOp op);

}  // namespace shoal::collective
