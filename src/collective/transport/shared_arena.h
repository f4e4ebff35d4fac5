// transport::SharedArena: memory that every rank of a communicator can read and
// write, offered by a transport when all of its ranks share one host (the TCP
// transport's shared segment), for algorithms that skip pairwise messages
// (single_host.h). Transports that cannot offer it return null from
// Context::arena().
//
// Contract:
//  - Slot(half, rank) is `slot_bytes()` bytes belonging to `rank` in half 0 or 1. Any
//    rank may read any slot; what is written where and when is the algorithm's rule.
//  - Barrier(deadline) returns once every rank has called its next Barrier, and fails
//    like Context::Wait: kAborted naming a peer that died or gave up, kTimeout naming
//    the ranks that did not arrive. Writes to slots before a rank's Barrier are
//    visible to every rank after theirs. After a failure the Context is broken.
//  - NextHalf() alternates 0, 1, 0, ... per call on each rank. A rank may write its
//    slot of a half again only after a Barrier that every rank reached after its last
//    read of that half; using the halves in turn, one piece of work each with at
//    least one Barrier between its writes and its reads, satisfies this.
// Ownership: belongs to the Context that returns it.
// Thread-safety: the Context's (one thread at a time).
#pragma once

#include <cstddef>

#include "collective/types.h"
#include "common/status.h"

namespace shoal::collective::transport {

class SharedArena {
 public:
  virtual ~SharedArena() = default;
  virtual size_t slot_bytes() const = 0;
  virtual char* Slot(int half, int rank) const = 0;
  virtual int NextHalf() = 0;
  virtual Status Barrier(Deadline deadline) = 0;
};

}  // namespace shoal::collective::transport
