// ResourceProfile: the free resources of a cluster over time, as the scheduler can
// foresee them: what is free now, plus what each running job returns at its estimated
// end, minus what reservations hold. The backfill policy's arithmetic.
//
// Contract:
//  - Time is in milliseconds; a duration of 0 means "forever" (a job with no estimate).
//  - A running job with no estimate never returns its resources; one past its estimate
//    returns them "now + 1 ms" (it may end at any moment, but has not yet).
//  - FitsFrom(t, need, d) is true when `need` fits at every moment of [t, t + d).
//  - EarliestStart is the smallest t >= now with FitsFrom(t, need, d), or nullopt when
//    none exists with the estimates known.
//  - Reserve(t, need, d) takes `need` from [t, t + d); later questions see it.
//  - ReserveWhatIsLeftAtTheEnd takes, from the last step on, as much of `need` as is left
//    there (never below zero).
// Thread-safety: a value type.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "spec/resources.h"

namespace shoal {

class ResourceProfile {
 public:
  struct Release {
    int64_t at_ms;
    Resources resources;
  };
  ResourceProfile(int64_t now_ms, const Resources& free_now, std::vector<Release> releases);

  bool FitsFrom(int64_t start_ms, const Resources& need, int64_t duration_ms) const;
  std::optional<int64_t> EarliestStart(const Resources& need, int64_t duration_ms) const;
  void Reserve(int64_t start_ms, const Resources& need, int64_t duration_ms);
  // For a job with no known start: holds, from the last step on, as much of `need` as is
  // free there, so that nothing that runs forever can take what it will need.
  void ReserveWhatIsLeftAtTheEnd(const Resources& need);

 private:
  struct Step {
    int64_t at_ms;   // free from here until the next step
    Resources free;
  };
  // The index of the step that holds `t`, after splitting the profile there if needed.
  size_t SplitAt(int64_t t);
  size_t StepAt(int64_t t) const;

  std::vector<Step> steps_;  // sorted by at_ms; the first is now
};

}  // namespace shoal
