// shm::Segment: the shared memory of the ranks of one communicator that run on the
// same host, cut into one Channel per ordered pair of those ranks, followed by an
// Arena (arena.h) for algorithms that run when every rank is on this host.
//
// How it is shared, leaving nothing behind: the host's lowest rank (the leader)
// creates an anonymous memfd, listens on an abstract Unix socket with a random name
// (no file; it vanishes with the socket), publishes the name in the rendezvous store
// under "shm/<leader rank>", and hands the memfd to each other local rank over that
// socket (SCM_RIGHTS) after checking that rank's credentials (same uid, or root).
// Every rank maps the memfd and closes it. The memory is freed when the last rank
// unmaps it or dies: no /dev/shm name exists at any point, so kill -9 of every rank
// leaves no segment behind.
//
// Contract:
//  - Share() is called by every rank in `local_ranks` (sorted, this rank among them,
//    at least two) with the same list; it returns when this rank has the segment, or
//    fails by `deadline` naming the rank or step that did not happen.
//  - ChannelFrom(a, b) is the channel rank a writes and rank b reads (a != b, both in
//    local_ranks). Channels start empty.
//  - arena() views the Arena; its local rank i is local_ranks[i] (LocalIndex).
//  - Channel capacity shrinks with the number of local ranks (4 MiB for up to 5,
//    never under 256 KiB) so that the channels take at most ~128 MiB, and the arena
//    at most 64 MiB more; pages are only touched as they are used.
// Ownership: owns the mapping; Channels returned view it and must not outlive it.
// Thread-safety: immutable after Share.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collective/rendezvous/store.h"
#include "collective/transport/shm/arena.h"
#include "collective/transport/shm/channel.h"
#include "collective/types.h"
#include "common/status.h"

namespace shoal::collective::transport::shm {

class Segment {
 public:
  static Result<std::unique_ptr<Segment>> Share(int rank, const std::vector<int>& local_ranks, Store& store,
                                                Deadline deadline);
  ~Segment();
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;

  Channel ChannelFrom(int from_rank, int to_rank) const;
  Arena arena() const;
  int LocalIndex(int rank) const;
  int RankOf(int local) const { return local_ranks_[local]; }
  // Whether `rank` is one of the local ranks.
  bool Has(int rank) const;
  int local_ranks() const { return static_cast<int>(local_ranks_.size()); }

  // The capacity of each channel for `local` ranks on a host.
  static size_t ChannelCapacity(int local);

 private:
  Segment(std::vector<int> local_ranks, char* base, size_t bytes, size_t capacity);
  size_t ChannelsBytes() const;

  const std::vector<int> local_ranks_;
  char* const base_;
  const size_t bytes_;
  const size_t capacity_;
};

}  // namespace shoal::collective::transport::shm
