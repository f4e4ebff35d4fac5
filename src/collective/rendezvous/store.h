// Store: the tiny key-value store that ranks use to find each other (rendezvous).
//
// Contract:
//  - Set(key, value) publishes a value; a later Set of the same key overwrites it.
//  - Get(key) returns the value, or kNotFound if nobody has set the key yet.
//  - Wait(keys, timeout) returns OK once every key is set, or kTimeout naming the
//    keys still missing when the timeout passes. It never blocks longer than timeout
//    (plus one network round trip for remote stores).
//  - Keys are short strings of [A-Za-z0-9._/-]; values are arbitrary bytes.
//  - Stores hold no per-job state of their own: wrap one in a PrefixStore to keep
//    job attempts apart, so a restarted attempt never reads a stale key.
// Thread-safety: every implementation is safe to call from several threads at once.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/status.h"

namespace shoal::collective {

class Store {
 public:
  virtual ~Store() = default;

  virtual Status Set(const std::string& key, const std::string& value) = 0;
  virtual Result<std::string> Get(const std::string& key) = 0;
  virtual Status Wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) = 0;

  // Wait for one key, then Get it.
  Result<std::string> WaitGet(const std::string& key, std::chrono::milliseconds timeout);
};

// True when `key` only uses the characters every store accepts.
bool IsValidStoreKey(const std::string& key);

// "keys a, b still missing after 1000 ms" - shared wording for Wait timeouts.
Status MissingKeysTimeout(const std::vector<std::string>& missing, std::chrono::milliseconds timeout);

}  // namespace shoal::collective
