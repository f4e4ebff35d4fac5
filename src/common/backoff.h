// Backoff: the one retry policy of Shoal's control plane. Every call that retries a peer
// (an agent registering with its AM, an AM reporting to the server, a CLI waiting for a
// server to start) waits through one of these, on an injectable Clock.
//
// Contract:
//  - Wait() sleeps on the clock for the next delay: initial, then doubled each time up to
//    max; attempts() counts the waits so far. Reset() starts over (after a success).
//  - Callers log once per backoff step they choose (typically when attempts() == 0),
//    never once per try.
// Thread-safety: one owner.
#pragma once

#include <algorithm>
#include <cstdint>

#include "common/clock.h"

namespace shoal {

class Backoff {
 public:
  Backoff(const Clock& clock, int64_t initial_ms, int64_t max_ms)
      : clock_(clock), initial_ms_(std::max<int64_t>(1, initial_ms)), max_ms_(std::max(initial_ms_, max_ms)),
        next_ms_(initial_ms_) {}

  // The delay the next Wait() sleeps.
  int64_t next_delay_ms() const { return next_ms_; }
  int attempts() const { return attempts_; }
  void Wait() {
    clock_.SleepForMillis(next_ms_);
    next_ms_ = std::min(max_ms_, next_ms_ * 2);
    ++attempts_;
  }
  void Reset() {
    next_ms_ = initial_ms_;
    attempts_ = 0;
  }

 private:
  const Clock& clock_;
  int64_t initial_ms_;
  int64_t max_ms_;
  int64_t next_ms_;
  int attempts_ = 0;
};

}  // namespace shoal
