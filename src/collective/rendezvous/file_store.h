// FileStore: a Store in a directory on a file system every rank can see (a local
// path for processes on one machine, a shared file system across machines).
//
// Contract: see store.h. One file per key (slashes become nested directories);
// Set writes "<file>.tmp.<pid>.<n>" then renames it, so a reader never sees half a
// value. Wait polls the file system with a back-off capped at 10 ms.
// Ownership: creates the directory if needed; never deletes it.
// Thread-safety: safe across threads and processes.
#pragma once

#include <atomic>

#include "collective/rendezvous/store.h"

namespace shoal::collective {

class FileStore : public Store {
 public:
  explicit FileStore(std::string dir) : dir_(std::move(dir)) {}

  Status Set(const std::string& key, const std::string& value) override;
  Result<std::string> Get(const std::string& key) override;
  Status Wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;

 private:
  std::string PathOf(const std::string& key) const { return dir_ + "/" + key; }

  const std::string dir_;
  std::atomic<uint64_t> tmp_counter_{0};
};

}  // namespace shoal::collective
