// MemStorage: an in-memory object store with buckets, for unit tests ("mem://bucket/key").
// OpenStorage("mem://...") returns one process-wide instance (MemStorage::Shared()).
//
// Contract: as storage.h, with S3's semantics (flat keys, prefix listing, a missing bucket
// is kNotFound). Tests may inject failures: FailNext(n, status, after) lets `after` calls
// of any kind pass, then makes the next n return status. Unfinished multipart uploads are
// modelled by StartUpload (what a process killed mid-upload leaves on S3): they hold no
// object, are listed by Uploads() and go with DeletePrefix. OnUpload(hook) runs hook(uri)
// in PutFromFile after the local file was read and before the object is stored: a test's
// way to change a file while it is being uploaded.
// Thread-safety: every method takes one mutex.
#pragma once

#include <functional>
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
  void StartUpload(const std::string& uri);
  // Keys ("bucket/key") of the unfinished uploads, sorted.
  std::vector<std::string> Uploads();
  void OnUpload(std::function<void(const std::string& uri)> hook);

  Result<std::vector<ObjectInfo>> List(const std::string& prefix_uri) override;
  Result<ObjectInfo> Stat(const std::string& uri) override;
  Result<std::string> ReadRange(const std::string& uri, int64_t offset, int64_t length) override;
  Result<std::unique_ptr<Reader>> OpenReader(const std::string& uri) override;
  Status GetToFile(const std::string& uri, const std::string& local_path) override;
  Status PutFromFile(const std::string& local_path, const std::string& uri) override;
  Status PutString(const std::string& uri, const std::string& data) override;
  Status Copy(const std::string& from_uri, const std::string& to_uri) override;
  Status Delete(const std::string& uri) override;
  Status DeletePrefix(const std::string& folder_uri) override;
  Status CheckRoot(const std::string& uri) override;

 private:
  // "bucket/key" of a mem:// URI, after checking the bucket exists (lock held).
  Result<std::string> KeyOf(const std::string& uri);
  Status Injected();

  std::mutex mu_;
  std::set<std::string> buckets_;
  std::map<std::string, std::string> objects_;  // "bucket/key" -> bytes
  std::set<std::string> uploads_;               // "bucket/key" of unfinished uploads
  std::function<void(const std::string&)> on_upload_;
  int fail_calls_ = 0;
  int fail_after_ = 0;
  Status fail_status_;
};

}  // namespace shoal::storage
