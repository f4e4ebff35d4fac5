// MemStorage: an in-memory object store with buckets, for unit tests ("mem://bucket/key").
// OpenStorage("mem://...") returns one process-wide instance (MemStorage::Shared()).
//
// Contract: as storage.h, with S3's semantics (flat keys, prefix listing, a missing bucket
// is kNotFound). Tests may inject failures: FailNext(n, status, after) lets `after` calls
// of any kind pass, then makes the next n return status.
// Thread-safety: every method takes one mutex.
#pragma once

#include <map>
#include <mutex>
#include <set>

#include "storage/storage.h"

namespace shoal::storage {

class MemStorage final : public Storage {
 public:
  static MemStorage& Shared();
  static std::shared_ptr<Storage> SharedHandle();

  void CreateBucket(const std::string& bucket);
  void FailNext(int calls, Status status, int after = 0);
  // Object keys ("bucket/key") currently stored, sorted.
  std::vector<std::string> Keys();

  Result<std::vector<ObjectInfo>> List(const std::string& prefix_uri) override;
  Result<ObjectInfo> Stat(const std::string& uri) override;
  Result<std::string> ReadRange(const std::string& uri, int64_t offset, int64_t length) override;
  Result<std::unique_ptr<Reader>> OpenReader(const std::string& uri) override;
  Status GetToFile(const std::string& uri, const std::string& local_path) override;
  Status PutFromFile(const std::string& local_path, const std::string& uri) override;
  Status PutString(const std::string& uri, const std::string& data) override;
  Status Copy(const std::string& from_uri, const std::string& to_uri) override;
  Status Delete(const std::string& uri) override;
  Status CheckRoot(const std::string& uri) override;

 private:
  // "bucket/key" of a mem:// URI, after checking the bucket exists (lock held).
  Result<std::string> KeyOf(const std::string& uri);
  Status Injected();

  std::mutex mu_;
  std::set<std::string> buckets_;
  std::map<std::string, std::string> objects_;  // "bucket/key" -> bytes
  int fail_calls_ = 0;
  int fail_after_ = 0;
  Status fail_status_;
};

}  // namespace shoal::storage
