#include "scheduling/resource_profile.h"

#include <algorithm>

namespace shoal {

namespace {

int64_t EndOf(int64_t start_ms, int64_t duration_ms) {
  return duration_ms <= 0 ? INT64_MAX : start_ms + duration_ms;
}

}  // namespace

ResourceProfile::ResourceProfile(int64_t now_ms, const Resources& free_now, std::vector<Release> releases) {
  std::sort(releases.begin(), releases.end(), [](const Release& a, const Release& b) { return a.at_ms < b.at_ms; });
  steps_.push_back(Step{now_ms, free_now});
  for (const Release& release : releases) {
    int64_t at = std::max(release.at_ms, now_ms + 1);
    if (at != steps_.back().at_ms) steps_.push_back(Step{at, steps_.back().free});
    steps_.back().free += release.resources;
  }
}

size_t ResourceProfile::StepAt(int64_t t) const {
  auto after = std::upper_bound(steps_.begin(), steps_.end(), t,
                                [](int64_t value, const Step& step) { return value < step.at_ms; });
  return after == steps_.begin() ? 0 : static_cast<size_t>(after - steps_.begin()) - 1;
}

size_t ResourceProfile::SplitAt(int64_t t) {
  size_t i = StepAt(t);
  if (steps_[i].at_ms == t || t < steps_[i].at_ms) return i;
  steps_.insert(steps_.begin() + static_cast<std::ptrdiff_t>(i) + 1, Step{t, steps_[i].free});
  return i + 1;
}

bool ResourceProfile::FitsFrom(int64_t start_ms, const Resources& need, int64_t duration_ms) const {
  int64_t end = EndOf(start_ms, duration_ms);
  for (size_t i = StepAt(start_ms); i < steps_.size() && steps_[i].at_ms < end; ++i) {
    if (!steps_[i].free.Fits(need)) return false;
  }
  return true;
}

std::optional<int64_t> ResourceProfile::EarliestStart(const Resources& need, int64_t duration_ms) const {
  // A start can only become possible where something is returned: at a step's beginning.
  for (const Step& step : steps_) {
    if (FitsFrom(step.at_ms, need, duration_ms)) return step.at_ms;
  }
  return std::nullopt;
}

void ResourceProfile::Reserve(int64_t start_ms, const Resources& need, int64_t duration_ms) {
  int64_t end = EndOf(start_ms, duration_ms);
  size_t first = SplitAt(start_ms);
  size_t last = end == INT64_MAX ? steps_.size() : SplitAt(end);
  for (size_t i = first; i < last; ++i) steps_[i].free -= need;
}

void ResourceProfile::ReserveWhatIsLeftAtTheEnd(const Resources& need) {
  Resources& left = steps_.back().free;
  Resources held{std::clamp(need.cpus, 0.0, std::max(0.0, left.cpus)),
                 std::clamp<int64_t>(need.memory_bytes, 0, std::max<int64_t>(0, left.memory_bytes)),
                 std::clamp(need.gpus, 0, std::max(0, left.gpus))};
  left -= held;
}

}  // namespace shoal
