// StackRequests: the AM's bookkeeping for `shoal stack`. A request asks a set of tasks
// (by rank) for their stacks; each task learns of it from its next heartbeat reply,
// takes its stacks and answers with the text. The requester waits until every asked
// task answered or its deadline passed.
//
// Contract:
//  - Begin() starts request n+1 for `ranks` and forgets older ones; only the newest
//    request is pending.
//  - PendingFor(rank) is the request id a task still has to answer, if any.
//  - Answer() records a task's text for that id; answers to older ids are ignored.
//  - Complete(id) is true once every asked rank answered; Answers(id) lists them by rank.
// Thread-safety: not thread-safe; the AM guards it with its mutex.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace shoal {

class StackRequests {
 public:
  int64_t Begin(const std::set<int>& ranks);
  std::optional<int64_t> PendingFor(int rank) const;
  void Answer(int rank, int64_t id, std::string text);
  bool Complete(int64_t id) const;
  const std::map<int, std::string>& Answers() const { return answers_; }

 private:
  int64_t id_ = 0;
  std::set<int> asked_;
  std::map<int, std::string> answers_;
};

}  // namespace shoal
