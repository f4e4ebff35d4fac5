// FileStorage: plain paths and file:// URIs, i.e. the local disk or a shared file system
// (NFS, Lustre) mounted at the same path on every host.
//
// Contract: as storage.h. "file:///a/b" and "/a/b" name the same file; listed URIs keep
// the form the caller used. List of a directory walks it recursively (regular files
// only, symlinks followed). Writes go through a ".part" file renamed into place.
// Thread-safety: stateless; safe from any thread.
#pragma once

#include "storage/storage.h"

namespace shoal::storage {

class FileStorage final : public Storage {
 public:
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

  // The local path a URI names ("file://" stripped).
  static std::string PathOf(const std::string& uri);
};

// Copies the file at from to to (through to.part); ENOSPC is kResourceExhausted.
Status CopyLocalFile(const std::string& from, const std::string& to);

}  // namespace shoal::storage
