// shm::ArenaView: a transport's SharedArena over an shm::Arena (arena.h): this rank's
// local index, the halves taken in turn, and the slots. Waiting at the barrier is the
// transport's own business (it must watch its peers while it waits), so the view
// calls the function the transport gives it.
//
// Contract: as transport/shared_arena.h. `barrier` is called once per Barrier.
// Ownership: views memory the transport keeps alive at least as long as the view.
// Thread-safety: the owning Context's (one thread at a time).
#pragma once

#include <functional>
#include <string>

#include "collective/transport/shared_arena.h"
#include "collective/transport/shm/arena.h"

namespace shoal::collective::transport::shm {

class ArenaView : public SharedArena {
 public:
  ArenaView(Arena arena, int local_index, std::function<Status(Deadline)> barrier)
      : arena_(arena), local_index_(local_index), barrier_(std::move(barrier)) {}

  int local_size() const override { return arena_.local_ranks(); }
  int local_index() const override { return local_index_; }
  size_t slot_bytes() const override { return arena_.slot_bytes(); }
  char* Slot(int half, int local) const override { return arena_.Slot(half, local); }
  int NextHalf() override { return half_ ^= 1; }
  Status Barrier(Deadline deadline) override { return barrier_(deadline); }
  Arena& arena() { return arena_; }

 private:
  Arena arena_;
  const int local_index_;
  const std::function<Status(Deadline)> barrier_;
  int half_ = 1;
};

// What a rank waiting at the arena's barrier reports, the same from every transport:
// a local peer that closed its communicator instead of arriving, and (in a deadline's
// message) one that has not arrived yet.
inline Status ClosedBeforeBarrier(int peer, int rank) {
  return Aborted("rank " + std::to_string(peer) + " closed its communicator while rank " + std::to_string(rank) +
                 " waited for it at the shared-memory barrier");
}
inline std::string NotYetAtBarrier(int peer, uint64_t step) {
  return "rank " + std::to_string(peer) + " (to reach barrier " + std::to_string(step) + " of the shared-memory arena)";
}

}  // namespace shoal::collective::transport::shm
