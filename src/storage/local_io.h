// Local-file helpers shared by the storage implementations: errno to Status (a full disk
// is kResourceExhausted naming the path), whole-file writes through a ".part" file, and a
// Reader that reads an object in ranges.
// Thread-safety: pure functions; a RangeReader is used by one thread.
#pragma once

#include <cstdint>
#include <string>

#include "storage/storage.h"

namespace shoal::storage {

// "<what> <path>: <strerror>", with the code errno implies (ENOENT kNotFound, ENOSPC and
// EDQUOT kResourceExhausted with a hint to free space, otherwise kUnavailable).
Status ErrnoStatus(const std::string& what, const std::string& path, int err);
// Writes all of data to fd; path names it in errors.
Status WriteAll(int fd, const char* data, size_t n, const std::string& path);
// Creates (truncates) path for writing with `mode` (less the umask); parent folders are made.
Result<int> CreateForWrite(const std::string& path, unsigned mode = 0644);
// Closes fd and renames part_path over path (removing part_path on error).
Status FinishPart(int fd, const std::string& part_path, const std::string& path);

// Reads an object front to back in chunks of chunk_bytes through Storage::ReadRange.
class RangeReader final : public Reader {
 public:
  RangeReader(Storage& storage, std::string uri, int64_t size, int64_t chunk_bytes = 8 << 20)
      : storage_(storage), uri_(std::move(uri)), size_(size), chunk_(chunk_bytes) {}
  Result<size_t> Read(char* buf, size_t n) override;

 private:
  Storage& storage_;
  std::string uri_;
  int64_t size_;
  int64_t chunk_;
  int64_t offset_ = 0;  // of buffer_'s start in the object
  std::string buffer_;
  size_t used_ = 0;
};

}  // namespace shoal::storage
