// The host-leaders allreduce, for small buffers when the ranks sit on several hosts
// and some host has several of them: one barrier's worth of shared memory within
// each host, and recursive doubling across hosts among one rank per host.
//
//   1. each host's other ranks copy their buffers into their slots of the arena
//      (transport/shared_arena.h); barrier; the host's leader, its lowest rank,
//      reduces them all in rank order into its buffer;
//   2. the leaders, one per host in host order, run recursive doubling over the
//      network (log2(hosts) rounds, where the flat recursive doubling takes
//      log2(ranks) rounds over a mix of shared memory and network);
//   3. each leader copies the result into its slot of the arena's next half;
//      barrier; the host's other ranks copy it out.
// A rank alone on its host is its own leader and only takes part in step 2.
//
// Contract: call inside Communicator::Run when HostLeadersApply(comm, bytes) holds.
// It gives every rank the same answer: two or more hosts, one of them with two or
// more ranks, and a buffer of at most kHostLeadersMaxBytes. Above that size it
// measured no better than recursive doubling over the mixed links (docs/collective.md),
// whose rounds across hosts are as few when ranks sit in blocks.
// Every rank gets bitwise-identical results (the leaders' recursive doubling does,
// and the others copy their leader's). kAverage divides by the world size.
// Thread-safety: one thread per communicator.
#pragma once

#include "collective/communicator.h"

namespace shoal::collective {

inline constexpr size_t kHostLeadersMaxBytes = 16 << 10;

bool HostLeadersApply(const Communicator& comm, size_t bytes);
Status HostLeadersAllreduce(Communicator& comm, char* data, size_t count, DataType type, ReduceOp op);

}  // namespace shoal::collective
