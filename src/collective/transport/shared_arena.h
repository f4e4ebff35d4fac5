// transport::SharedArena: memory that the ranks of a communicator on one host (its
// "local" ranks) can all read and write, offered by a transport that shares memory
// between them (the TCP transport's shared segment), for algorithms that skip
// pairwise messages (single_host.h, host_leaders.h). Transports that cannot offer
// it, and ranks alone on their host, get null from Context::arena().
//
// Contract:
//  - local_size() local ranks, in rank order; this rank is local_index() among them.
//    When every rank of the communicator is local, local index and rank coincide.
//  - Slot(half, local) is `slot_bytes()` bytes belonging to local rank `local` in
//    half 0 or 1. Any local rank may read any slot; what is written where and when is
//    the algorithm's rule.
//  - Barrier(deadline) returns once every local rank has called its next Barrier, and
//    fails like Context::Wait: kAborted naming a peer that died or gave up (any rank
//    of the communicator), kTimeout naming the local ranks that did not arrive.
//    Writes to slots before a rank's Barrier are visible to every local rank after
//    theirs. After a failure the Context is broken.
//  - NextHalf() alternates 0, 1, 0, ... per call on each rank. A rank may write its
//    slot of a half again only after a Barrier that every local rank reached after
//    its last read of that half; using the halves in turn, one piece of work each with at
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
  virtual int local_size() const = 0;
  virtual int local_index() const = 0;
  virtual size_t slot_bytes() const = 0;
  virtual char* Slot(int half, int local) const = 0;
  virtual int NextHalf() = 0;
  virtual Status Barrier(Deadline deadline) = 0;
};

}  // namespace shoal::collective::transport
