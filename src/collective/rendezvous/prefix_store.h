// PrefixStore: a view of another Store in which every key gets "<prefix>/" in front,
// so that job attempts (prefix "job-7/attempt-2") never see each other's keys.
//
// Ownership: does not own the wrapped store, which must outlive it.
// Thread-safety: as thread-safe as the wrapped store.
#pragma once

#include "collective/rendezvous/store.h"

namespace shoal::collective {

class PrefixStore : public Store {
 public:
  PrefixStore(std::string prefix, Store& base) : prefix_(std::move(prefix)), base_(base) {}

  Status Set(const std::string& key, const std::string& value) override;
  Result<std::string> Get(const std::string& key) override;
  Status Wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;

  const std::string& prefix() const { return prefix_; }

 private:
  std::string Full(const std::string& key) const { return prefix_ + "/" + key; }

  const std::string prefix_;
  Store& base_;
};

}  // namespace shoal::collective
