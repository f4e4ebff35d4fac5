#include "master/stack_requests.h"

namespace shoal {

int64_t StackRequests::Begin(const std::set<int>& ranks) {
  asked_ = ranks;
  answers_.clear();
  return ++id_;
}

std::optional<int64_t> StackRequests::PendingFor(int rank) const {
  if (id_ == 0 || !asked_.contains(rank) || answers_.contains(rank)) return std::nullopt;
  return id_;
}

void StackRequests::Answer(int rank, int64_t id, std::string text) {
  if (id != id_ || !asked_.contains(rank)) return;
  answers_[rank] = std::move(text);
}

bool StackRequests::Complete(int64_t id) const { return id == id_ && answers_.size() == asked_.size(); }

}  // namespace shoal
