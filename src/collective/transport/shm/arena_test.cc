// Unit tests of shm::Arena: the slots' layout, the barrier's arrival counters, and
// the asleep flags that keep a wake-up from being lost.
#include "collective/transport/shm/arena.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

namespace shoal::collective::transport::shm {
namespace {

// Zeroed, page-aligned memory for an arena of `local` ranks.
struct Memory {
  explicit Memory(int local) : bytes(Arena::Bytes(local)), base(static_cast<char*>(std::aligned_alloc(4096, bytes))) {
    std::fill(base, base + bytes, 0);
  }
  ~Memory() { std::free(base); }
  Arena arena(int local) { return Arena(base, local, Arena::SlotBytes(local)); }
  size_t bytes;
  char* base;
};

TEST(ArenaTest, SlotsAreDisjointAndInsideTheArena) {
  const int local = 3;
  Memory memory(local);
  Arena arena = memory.arena(local);
  EXPECT_EQ(arena.slot_bytes(), size_t{4} << 20);
  std::vector<std::pair<char*, char*>> slots;
  for (int half = 0; half < 2; ++half)
    for (int r = 0; r < local; ++r) slots.emplace_back(arena.Slot(half, r), arena.Slot(half, r) + arena.slot_bytes());
  for (size_t i = 0; i < slots.size(); ++i) {
    EXPECT_GE(slots[i].first, memory.base + local * sizeof(ArenaRankState));
    EXPECT_LE(slots[i].second, memory.base + memory.bytes);
    for (size_t j = i + 1; j < slots.size(); ++j)
      EXPECT_TRUE(slots[i].second <= slots[j].first || slots[j].second <= slots[i].first) << i << " overlaps " << j;
  }
}

TEST(ArenaTest, SlotsShrinkWithManyRanksButNotBelowAQuarterMiB) {
  EXPECT_EQ(Arena::SlotBytes(8), size_t{4} << 20);
  EXPECT_EQ(Arena::SlotBytes(16), size_t{2} << 20);
  EXPECT_EQ(Arena::SlotBytes(1024), size_t{256} << 10);
}

TEST(ArenaTest, BarrierCompletesWhenEveryRankArrived) {
  Memory memory(3);
  Arena arena = memory.arena(3);
  auto no_wake = [](int) { ADD_FAILURE() << "nobody sleeps"; };
  arena.Arrive(0, 1, no_wake);
  arena.Arrive(2, 1, no_wake);
  EXPECT_FALSE(arena.AllArrived(1));
  EXPECT_EQ(arena.Missing(1), std::vector<int>{1});
  arena.Arrive(1, 1, no_wake);
  EXPECT_TRUE(arena.AllArrived(1));
  EXPECT_FALSE(arena.AllArrived(2));
  EXPECT_EQ(arena.Missing(2), (std::vector<int>{0, 1, 2}));
}

TEST(ArenaTest, ASleeperIsWokenOnceByTheRankItWaitsFor) {
  Memory memory(2);
  Arena arena = memory.arena(2);
  arena.Arrive(0, 1, [](int) {});
  EXPECT_TRUE(arena.ArmSleep(0, 1));  // rank 1 has not arrived: rank 0 may sleep
  std::vector<int> woken;
  arena.Arrive(1, 1, [&](int r) { woken.push_back(r); });
  EXPECT_EQ(woken, std::vector<int>{0});
  woken.clear();
  arena.Arrive(1, 2, [&](int r) { woken.push_back(r); });  // the flag was cleared
  EXPECT_TRUE(woken.empty());
  EXPECT_FALSE(arena.ArmSleep(1, 1));  // everyone is there: no sleep, flag lowered
  arena.Arrive(0, 2, [&](int r) { woken.push_back(r); });
  EXPECT_TRUE(woken.empty());
}

// Two threads pass 20,000 barriers, sleeping whenever ArmSleep allows; a lost
// wake-up would leave one asleep for good (the test would hang past its guard).
TEST(ArenaTest, NoWakeUpIsLostUnderContention) {
  Memory memory(2);
  Arena arena = memory.arena(2);
  std::atomic<int> bells[2] = {0, 0};
  std::atomic<bool> stuck{false};
  auto rank = [&](int me) {
    for (uint64_t step = 1; step <= 20000 && !stuck; ++step) {
      arena.Arrive(me, step, [&](int sleeper) {
        bells[sleeper].fetch_add(1);
        bells[sleeper].notify_one();
      });
      while (!arena.AllArrived(step) && !stuck) {
        // Like a doorbell socket, a ring after this point wakes the sleeper: it may
        // come from a peer still finishing its previous Arrive.
        const int seen = bells[me].load();
        if (step % 3 == 0 || !arena.ArmSleep(me, step)) continue;  // sometimes spin
        const auto guard = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (bells[me].load() == seen && !stuck) {
          std::this_thread::yield();
          if (std::chrono::steady_clock::now() > guard) stuck = true;
        }
        arena.Disarm(me);
      }
    }
  };
  std::thread a(rank, 0), b(rank, 1);
  a.join();
  b.join();
  EXPECT_FALSE(stuck) << "a rank slept through its peer's arrival";
}

}  // namespace
}  // namespace shoal::collective::transport::shm
