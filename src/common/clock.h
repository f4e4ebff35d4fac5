// Clock: the one source of time for Shoal's state machines.
//
// Contract:
//  - Components that time things out (heartbeats, registration, retries) take a Clock&
//    instead of calling std::chrono directly, so tests drive time with FakeClock.
//  - Times are milliseconds since an arbitrary epoch (steady for SystemClock); only
//    differences are meaningful. WallMillis() is Unix time, for display and history.
// Thread-safety: both implementations are safe to call from any thread.
#pragma once

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
};

class SystemClock final : public Clock {
 public:
  int64_t NowMillis() const override;
  int64_t WallMillis() const override;
  static SystemClock& Instance();
};

// A clock that moves only when a test says so.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(int64_t start_millis = 1'000'000) : now_(start_millis) {}
  int64_t NowMillis() const override { return now_.load(); }
  int64_t WallMillis() const override { return now_.load(); }
  void Advance(int64_t millis) { now_ += millis; }

 private:
  std::atomic<int64_t> now_;
};

}  // namespace shoal
