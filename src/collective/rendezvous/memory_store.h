// MemoryStore: a Store kept in this process's memory, for ranks that are threads
// (tests) and as the backing map of the HTTP rendezvous handler.
//
// Contract: see store.h. Wait blocks on a condition variable, no polling.
// Thread-safety: fully thread-safe.
#pragma once

#include <condition_variable>
#include <map>
#include <mutex>

#include "collective/rendezvous/store.h"

namespace shoal::collective {

class MemoryStore : public Store {
 public:
  Status Set(const std::string& key, const std::string& value) override;
  Result<std::string> Get(const std::string& key) override;
  Status Wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;

  // Removes every key that starts with `prefix` (the application master drops a
  // finished attempt's keys). Returns how many were removed.
  size_t EraseWithPrefix(const std::string& prefix);

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  std::map<std::string, std::string> values_;  // guarded by mu_
};

}  // namespace shoal::collective
