#include "storage/local_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/files.h"

namespace shoal::storage {

Status ErrnoStatus(const std::string& what, const std::string& path, int err) {
  std::string message = what + " " + path + ": " + std::strerror(err);
  if (err == ENOENT) return NotFound(message);
  if (err == ENOSPC || err == EDQUOT) {
    return ResourceExhausted(message + " (the local disk is full: free space or give the task a bigger disk)");
  }
  return Unavailable(message);
}

Status WriteAll(int fd, const char* data, size_t n, const std::string& path) {
  while (n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("cannot write", path, errno);
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
  return Status::Ok();
}

Result<int> CreateForWrite(const std::string& path, unsigned mode) {
  RETURN_IF_ERROR(MakeDirectories(DirName(path)));
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return ErrnoStatus("cannot create", path, errno);
  return fd;
}

Status FinishPart(int fd, const std::string& part_path, const std::string& path) {
  if (::close(fd) != 0) {
    Status s = ErrnoStatus("cannot close", part_path, errno);
    ::unlink(part_path.c_str());
    return s;
  }
  if (::rename(part_path.c_str(), path.c_str()) != 0) {
    Status s = ErrnoStatus("cannot rename into", path, errno);
    ::unlink(part_path.c_str());
    return s;
  }
  return Status::Ok();
}

Result<size_t> RangeReader::Read(char* buf, size_t n) {
  if (used_ == buffer_.size()) {
    offset_ += static_cast<int64_t>(buffer_.size());
    buffer_.clear();
    used_ = 0;
    if (offset_ >= size_) return size_t{0};
    ASSIGN_OR_RETURN(buffer_, storage_.ReadRange(uri_, offset_, std::min(chunk_, size_ - offset_)));
    if (buffer_.empty()) return size_t{0};
  }
  size_t k = std::min(n, buffer_.size() - used_);
  std::memcpy(buf, buffer_.data() + used_, k);
  used_ += k;
  return k;
}

}  // namespace shoal::storage
