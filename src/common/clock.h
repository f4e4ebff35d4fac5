// Clock: the one source of time for Shoal's state machines.
//
// Contract:
//  - Components that time things out (heartbeats, registration, retries) take a Clock&
//    instead of calling std::chrono directly, so tests drive time with FakeClock.
//  - Times are milliseconds since an arbitrary epoch (steady for SystemClock); only
//    differences are meaningful. WallMillis() is Unix time, for display and history.
//  - SleepForMillis waits that long on this clock, and WaitFor waits on a condition
//    variable until a predicate holds or that long passes on this clock. Every sleep and
//    timed wait of the server core, the AM and the agent goes through these two.
//  - SystemClock sleeps and waits in real time. FakeClock moves its own time forward at
//    once, so a retry loop over a FakeClock runs in no real time (one thread's tests).
//    ManualClock moves only when Advance() is called; its sleepers and waiters wake
//    then, so many threads share one test-driven time (the mini cluster, tests/cluster).
// Thread-safety: every implementation is safe to call from any thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>

namespace shoal {

class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic milliseconds.
  virtual int64_t NowMillis() const = 0;
  // Unix time in milliseconds.
  virtual int64_t WallMillis() const = 0;
  virtual void SleepForMillis(int64_t millis) const = 0;
  // Waits on `cv` with `lock` held (as std::condition_variable::wait_for does) until
  // done() holds or `millis` pass on this clock; returns done().
  virtual bool WaitFor(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, int64_t millis,
                       const std::function<bool()>& done) const = 0;
};

class SystemClock final : public Clock {
 public:
  int64_t NowMillis() const override;
  int64_t WallMillis() const override;
  void SleepForMillis(int64_t millis) const override;
  bool WaitFor(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, int64_t millis,
               const std::function<bool()>& done) const override;
  static SystemClock& Instance();
};

// A clock that moves only when a test says so.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(int64_t start_millis = 1'000'000) : now_(start_millis) {}
  int64_t NowMillis() const override { return now_.load(); }
  int64_t WallMillis() const override { return now_.load(); }
  void SleepForMillis(int64_t millis) const override { now_ += std::max<int64_t>(0, millis); }
  // Nothing else runs while this one thread waits: the time passes at once.
  bool WaitFor(std::condition_variable&, std::unique_lock<std::mutex>&, int64_t millis,
               const std::function<bool()>& done) const override {
    if (done()) return true;
    SleepForMillis(millis);
    return done();
  }
  void Advance(int64_t millis) { now_ += millis; }

 private:
  mutable std::atomic<int64_t> now_;
};

// A clock shared by many threads that moves only when Advance() is called. Sleepers and
// waiters block until their deadline on this clock passes (or, for WaitFor, until their
// condition variable is told and the predicate holds).
class ManualClock final : public Clock {
 public:
  // The wall time starts at `wall_start_millis` (saved models and logs are named by it).
  explicit ManualClock(int64_t start_millis = 1'000'000, int64_t wall_start_millis = 1'790'000'000'000)
      : now_(start_millis), wall_offset_(wall_start_millis - start_millis) {}
  int64_t NowMillis() const override { return now_.load(); }
  int64_t WallMillis() const override { return now_.load() + wall_offset_; }
  void SleepForMillis(int64_t millis) const override;
  bool WaitFor(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, int64_t millis,
               const std::function<bool()>& done) const override;
  // Moves the time forward and wakes every sleeper and waiter to look at it.
  void Advance(int64_t millis);
  // How many WaitFor calls are waiting now: what a test watches to know that a call it
  // started has parked, instead of sleeping for a while.
  size_t Waiters() const;
  // From now on the time moves by itself: every sleep and wait ends at once, moving the
  // time to its deadline (as FakeClock's do). For tearing down, when no test drives it.
  void Release();

 private:
  mutable std::atomic<int64_t> now_;
  const int64_t wall_offset_;
  std::atomic<bool> released_{false};
  mutable std::mutex waiters_mutex_;
  mutable std::multiset<std::condition_variable*> waiters_;  // GUARDED_BY(waiters_mutex_)
};

}  // namespace shoal
