#include "collective/transport/shm/arena.h"

namespace shoal::collective::transport::shm {
namespace {
// Slots shrink from 4 MiB, never under 256 KiB, so that both halves stay within 64 MiB.
constexpr size_t kMaxSlotBytes = size_t{4} << 20, kMinSlotBytes = size_t{256} << 10, kMaxHalvesBytes = size_t{64} << 20;
}  // namespace

Arena::Arena(char* base, int local_ranks, size_t slot_bytes)
    : states_(reinterpret_cast<ArenaRankState*>(base)),
      slots_(base + HeaderBytes(local_ranks)),
      local_ranks_(local_ranks),
      slot_bytes_(slot_bytes) {}

size_t Arena::HeaderBytes(int local) {
  const size_t bytes = static_cast<size_t>(local) * sizeof(ArenaRankState);
  return (bytes + kSegmentPage - 1) / kSegmentPage * kSegmentPage;
}

size_t Arena::SlotBytes(int local) {
  size_t slot = kMaxSlotBytes;
  while (slot > kMinSlotBytes && 2 * static_cast<size_t>(local) * slot > kMaxHalvesBytes) slot /= 2;
  return slot;
}

size_t Arena::Bytes(int local) { return HeaderBytes(local) + 2 * static_cast<size_t>(local) * SlotBytes(local); }

char* Arena::Slot(int half, int local) const {
  return slots_ + (static_cast<size_t>(half) * local_ranks_ + static_cast<size_t>(local)) * slot_bytes_;
}

bool Arena::AllArrived(uint64_t step) const {
  for (int r = 0; r < local_ranks_; ++r)
    if (states_[r].arrived.load(std::memory_order_acquire) < step) return false;
  return true;
}

std::vector<int> Arena::Missing(uint64_t step) const {
  std::vector<int> missing;
  for (int r = 0; r < local_ranks_; ++r)
    if (states_[r].arrived.load(std::memory_order_acquire) < step) missing.push_back(r);
  return missing;
}

bool Arena::ArmSleep(int me, uint64_t step) {
  states_[me].asleep.store(1, std::memory_order_seq_cst);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  for (int r = 0; r < local_ranks_; ++r)
    if (states_[r].arrived.load(std::memory_order_seq_cst) < step) return true;
  Disarm(me);
  return false;
}

void Arena::Disarm(int me) { states_[me].asleep.store(0, std::memory_order_relaxed); }

}  // namespace shoal::collective::transport::shm
