// shm::Arena: the part of a host's shared segment that algorithms address directly
// when every rank of a communicator runs on that host: one slot per rank in each of
// two halves, and a barrier made of per-rank arrival counters.
//
// Layout: a header page (or more) with, per local rank, its arrival counter and its
// "asleep" flag on cache lines of their own; then half 0's slots (one per local
// rank, slot_bytes each), then half 1's.
//
// Contract:
//  - Arrive(me, step, wake) publishes that local rank `me` reached barrier `step`
//    (steps count 1, 2, ... and every rank passes the same ones in order), then calls
//    wake(local) for each local rank that went to sleep waiting, clearing its flag:
//    the caller rings that rank's doorbell.
//  - AllArrived(step) is true once every local rank published `step` or later.
//  - ArmSleep(me, step) raises `me`'s asleep flag and looks again: true means it may
//    sleep (someone has not arrived, and will see the flag when it does). Disarm
//    lowers it after waking. Sequentially consistent fences on both sides make the
//    lost wake-up impossible, as in Channel.
//  - Slot(half, local) is local rank `local`'s slot in half 0 or 1. What goes in the
//    slots, and when, is the algorithm's business (single_host.h).
// Ownership: views memory owned by a shm::Segment.
// Thread-safety: each local rank touches only its own counter and flag for writing.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace shoal::collective::transport::shm {

// The unit the segment's parts (channels, the arena) are aligned to.
inline constexpr size_t kSegmentPage = 4096;

struct alignas(64) ArenaRankState {
  std::atomic<uint64_t> arrived;
  alignas(64) std::atomic<uint32_t> asleep;
};
static_assert(sizeof(ArenaRankState) == 128);

class Arena {
 public:
  Arena() = default;
  Arena(char* base, int local_ranks, size_t slot_bytes);

  // Bytes an arena for `local` ranks takes (header and both halves), and the slot
  // size it uses: 4 MiB while both halves stay within 64 MiB, less above (never
  // under 256 KiB).
  static size_t Bytes(int local);
  static size_t SlotBytes(int local);

  int local_ranks() const { return local_ranks_; }
  size_t slot_bytes() const { return slot_bytes_; }
  char* Slot(int half, int local) const;

  template <typename WakeFn>
  void Arrive(int me, uint64_t step, WakeFn wake) {
    states_[me].arrived.store(step, std::memory_order_seq_cst);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    for (int r = 0; r < local_ranks_; ++r) {
      auto& asleep = states_[r].asleep;
      if (r != me && asleep.load(std::memory_order_seq_cst) != 0 && asleep.exchange(0) != 0) wake(r);
    }
  }
  bool AllArrived(uint64_t step) const;
  // The local ranks that have not yet published `step`.
  std::vector<int> Missing(uint64_t step) const;
  bool ArmSleep(int me, uint64_t step);
  void Disarm(int me);

 private:
  static size_t HeaderBytes(int local);

  ArenaRankState* states_ = nullptr;
  char* slots_ = nullptr;
  int local_ranks_ = 0;
  size_t slot_bytes_ = 0;
};

}  // namespace shoal::collective::transport::shm
