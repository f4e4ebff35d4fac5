#include "common/clock.h"

#include <chrono>
#include <thread>

namespace shoal {

int64_t SystemClock::NowMillis() const {
  using namespace std::chrono;
  return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

int64_t SystemClock::WallMillis() const {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

void SystemClock::SleepForMillis(int64_t millis) const {
  if (millis > 0) std::this_thread::sleep_for(std::chrono::milliseconds(millis));
}

bool SystemClock::WaitFor(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, int64_t millis,
                          const std::function<bool()>& done) const {
  return cv.wait_for(lock, std::chrono::milliseconds(std::max<int64_t>(0, millis)), done);
}

SystemClock& SystemClock::Instance() {
  static SystemClock clock;
  return clock;
}

}  // namespace shoal

namespace shoal {

bool ManualClock::WaitFor(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, int64_t millis,
                          const std::function<bool()>& done) const {
  const int64_t deadline = NowMillis() + std::max<int64_t>(0, millis);
  {
    std::lock_guard registered(waiters_mutex_);
    waiters_.insert(&cv);
  }
  // Advance() tells `cv` without holding `lock`, so a wake can fall between the check and
  // the wait: a short real slice bounds how late such a waiter looks again.
  while (!done() && NowMillis() < deadline) {
    if (released_) {
      int64_t now = now_.load();
      while (now < deadline && !now_.compare_exchange_weak(now, deadline)) {
      }
      break;
    }
    cv.wait_for(lock, std::chrono::milliseconds(5));
  }
  {
    std::lock_guard registered(waiters_mutex_);
    waiters_.erase(waiters_.find(&cv));
  }
  return done();
}

size_t ManualClock::Waiters() const {
  std::lock_guard registered(waiters_mutex_);
  return waiters_.size();
}

void ManualClock::SleepForMillis(int64_t millis) const {
  std::mutex mutex;
  std::condition_variable woken;
  std::unique_lock lock(mutex);
  WaitFor(woken, lock, millis, [] { return false; });
}

void ManualClock::Release() {
  released_ = true;
  Advance(0);
}

void ManualClock::Advance(int64_t millis) {
  now_ += std::max<int64_t>(0, millis);
  std::lock_guard registered(waiters_mutex_);
  for (std::condition_variable* cv : waiters_) cv->notify_all();
}

}  // namespace shoal
