// Clock: the one source of time for Shoal's state machines.
//
// Contract:
//  - Components that time things out (heartbeats, registration, retries) take a Clock&
//    instead of calling std::chrono directly, so tests drive time with FakeClock.
//  - Times are milliseconds since an arbitrary epoch (steady for SystemClock); only
//    differences are meaningful. WallMillis() is Unix time, for display and history.
//  - SleepForMillis waits that long on this clock: SystemClock sleeps; FakeClock moves
//    its own time forward at once, so a retry loop over a FakeClock runs in no real time.
// Thread-safety: both implementations are safe to call from any thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace shoal {

class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic milliseconds.
  virtual int64_t NowMillis() const = 0;
  // Unix time in milliseconds.
  virtual int64_t WallMillis() const = 0;
  virtual void SleepForMillis(int64_t millis) const = 0;
};

class SystemClock final : public Clock {
 public:
  int64_t NowMillis() const override;
  int64_t WallMillis() const override;
  void SleepForMillis(int64_t millis) const override;
  static SystemClock& Instance();
};

// A clock that moves only when a test says so.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(int64_t start_millis = 1'000'000) : now_(start_millis) {}
  int64_t NowMillis() const override { return now_.load(); }
  int64_t WallMillis() const override { return now_.load(); }
  void SleepForMillis(int64_t millis) const override { now_ += std::max<int64_t>(0, millis); }
  void Advance(int64_t millis) { now_ += millis; }

 private:
  mutable std::atomic<int64_t> now_;
};

}  // namespace shoal
