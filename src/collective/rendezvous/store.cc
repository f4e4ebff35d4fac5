#include "collective/rendezvous/store.h"

namespace shoal::collective {

Result<std::string> Store::WaitGet(const std::string& key, std::chrono::milliseconds timeout) {
  RETURN_IF_ERROR(Wait({key}, timeout));
  return Get(key);
}

bool IsValidStoreKey(const std::string& key) {
  if (key.empty() || key.size() > 512) return false;
  for (char c : key) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '/' || c == '-';
    if (!ok) return false;
  }
  return key.find("..") == std::string::npos;
}

Status MissingKeysTimeout(const std::vector<std::string>& missing, std::chrono::milliseconds timeout) {
  std::string names;
  for (size_t i = 0; i < missing.size() && i < 8; ++i) names += (i ? ", " : "") + missing[i];
  if (missing.size() > 8) names += ", ...";
  return Timeout("rendezvous keys [" + names + "] still missing after " +
                 std::to_string(timeout.count()) + " ms; are all ranks running?");
}

}  // namespace shoal::collective
