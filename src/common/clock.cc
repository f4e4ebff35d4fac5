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

SystemClock& SystemClock::Instance() {
  static SystemClock clock;
  return clock;
}

}  // namespace shoal
