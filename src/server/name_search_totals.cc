#include "server/name_search_totals.h"

namespace shoal {

std::optional<int64_t> NameSearchTotals::Find(const std::string& text, int64_t jobs) {
  if (jobs != jobs_) {
    Forget();
    return std::nullopt;
  }
  auto it = totals_.find(text);
  if (it == totals_.end()) return std::nullopt;
  return it->second;
}

void NameSearchTotals::Remember(const std::string& text, int64_t total, int64_t jobs) {
  if (jobs != jobs_) {
    Forget();
    jobs_ = jobs;
  }
  if (totals_.contains(text)) return;
  if (totals_.size() == kMaxTexts) {
    totals_.erase(oldest_first_.front());
    oldest_first_.pop_front();
  }
  totals_.emplace(text, total);
  oldest_first_.push_back(text);
}

void NameSearchTotals::Added(const std::string& name) {
  if (jobs_ < 0) return;
  ++jobs_;
  for (auto& [text, total] : totals_) {
    if (name.find(text) != std::string::npos) ++total;
  }
}

void NameSearchTotals::Forget() {
  jobs_ = -1;
  totals_.clear();
  oldest_first_.clear();
}

}  // namespace shoal
