#include "collective/rendezvous/memory_store.h"

namespace shoal::collective {

Status MemoryStore::Set(const std::string& key, const std::string& value) {
  if (!IsValidStoreKey(key)) return InvalidArgument("bad rendezvous key '" + key + "'");
  {
    std::lock_guard<std::mutex> lock(mu_);
    values_[key] = value;
  }
  changed_.notify_all();
  return Status::Ok();
}

Result<std::string> MemoryStore::Get(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = values_.find(key);
  if (it == values_.end()) return NotFound("rendezvous key '" + key + "' is not set");
  return it->second;
}

Status MemoryStore::Wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock<std::mutex> lock(mu_);
  auto missing = [&] {
    std::vector<std::string> out;
    for (const auto& k : keys)
      if (!values_.count(k)) out.push_back(k);
    return out;
  };
  while (true) {
    auto left = missing();
    if (left.empty()) return Status::Ok();
    if (changed_.wait_until(lock, deadline) == std::cv_status::timeout) {
      left = missing();
      if (left.empty()) return Status::Ok();
      return MissingKeysTimeout(left, timeout);
    }
  }
}

size_t MemoryStore::EraseWithPrefix(const std::string& prefix) {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (auto it = values_.lower_bound(prefix); it != values_.end() && it->first.compare(0, prefix.size(), prefix) == 0;) {
    it = values_.erase(it);
    ++n;
  }
  return n;
}

}  // namespace shoal::collective
