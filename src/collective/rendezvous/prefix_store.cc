#include "collective/rendezvous/prefix_store.h"

namespace shoal::collective {

Status PrefixStore::Set(const std::string& key, const std::string& value) {
  return base_.Set(Full(key), value);
}

Result<std::string> PrefixStore::Get(const std::string& key) { return base_.Get(Full(key)); }

Status PrefixStore::Wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  std::vector<std::string> full;
  full.reserve(keys.size());
  for (const auto& k : keys) full.push_back(Full(k));
  return base_.Wait(full, timeout);
}

}  // namespace shoal::collective
