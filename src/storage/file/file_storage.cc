#include "storage/file/file_storage.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include "storage/local_io.h"

namespace shoal::storage {
namespace {

namespace fs = std::filesystem;

constexpr const char* kFilePrefix = "file://";

bool IsFileUri(const std::string& uri) { return uri.rfind(kFilePrefix, 0) == 0; }

ObjectInfo InfoOf(const std::string& uri, const struct stat& st) {
  return ObjectInfo{uri, static_cast<int64_t>(st.st_size),
                    static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1'000'000};
}

class FdReader final : public Reader {
 public:
  FdReader(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~FdReader() override { ::close(fd_); }
  Result<size_t> Read(char* buf, size_t n) override {
    for (;;) {
      ssize_t r = ::read(fd_, buf, n);
      if (r >= 0) return static_cast<size_t>(r);
      if (errno != EINTR) return ErrnoStatus("cannot read", path_, errno);
    }
  }

 private:
  int fd_;
  std::string path_;
};

Result<int> OpenForRead(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("cannot open", path, errno);
  return fd;
}

}  // namespace

std::string FileStorage::PathOf(const std::string& uri) {
  return IsFileUri(uri) ? uri.substr(std::string(kFilePrefix).size()) : uri;
}

Result<std::vector<ObjectInfo>> FileStorage::List(const std::string& prefix_uri) {
  std::string path = PathOf(prefix_uri);
  if (path.empty()) path = ".";
  std::vector<ObjectInfo> out;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return out;
    return ErrnoStatus("cannot list", path, errno);
  }
  if (S_ISREG(st.st_mode)) {
    out.push_back(InfoOf(prefix_uri, st));
    return out;
  }
  std::error_code ec;
  fs::recursive_directory_iterator it(path, fs::directory_options::follow_directory_symlink, ec);
  if (ec) return Unavailable("cannot list " + path + ": " + ec.message());
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) return Unavailable("cannot list " + path + ": " + ec.message());
    std::string rel = fs::relative(it->path(), path, ec).generic_string();
    if (ec) continue;
    struct stat fst;
    if (::stat(it->path().c_str(), &fst) != 0 || !S_ISREG(fst.st_mode)) continue;
    out.push_back(InfoOf(JoinUri(prefix_uri, rel), fst));
  }
  std::sort(out.begin(), out.end(), [](const ObjectInfo& a, const ObjectInfo& b) { return a.uri < b.uri; });
  return out;
}

Result<ObjectInfo> FileStorage::Stat(const std::string& uri) {
  std::string path = PathOf(uri);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return ErrnoStatus("cannot read", path, errno);
  if (!S_ISREG(st.st_mode)) return NotFound(path + " is not a regular file");
  return InfoOf(uri, st);
}

Result<std::string> FileStorage::ReadRange(const std::string& uri, int64_t offset, int64_t length) {
  std::string path = PathOf(uri);
  ASSIGN_OR_RETURN(int fd, OpenForRead(path));
  std::string out(static_cast<size_t>(std::max<int64_t>(length, 0)), '\0');
  size_t got = 0;
  while (got < out.size()) {
    ssize_t r = ::pread(fd, out.data() + got, out.size() - got, offset + static_cast<int64_t>(got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      Status s = ErrnoStatus("cannot read", path, errno);
      ::close(fd);
      return s;
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  ::close(fd);
  out.resize(got);
  return out;
}

Result<std::unique_ptr<Reader>> FileStorage::OpenReader(const std::string& uri) {
  std::string path = PathOf(uri);
  ASSIGN_OR_RETURN(int fd, OpenForRead(path));
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  return std::unique_ptr<Reader>(std::make_unique<FdReader>(fd, path));
}

Status CopyLocalFile(const std::string& from, const std::string& to) {
  ASSIGN_OR_RETURN(int in, OpenForRead(from));
  struct stat source;
  if (::fstat(in, &source) != 0) {
    Status s = ErrnoStatus("cannot read", from, errno);
    ::close(in);
    return s;
  }
  std::string part = to + ".part";
  // Private while it fills; then the source's permission bits (not set-id bits), so a
  // 0640 file stays 0640 wherever it is copied.
  Result<int> out = CreateForWrite(part, 0600);
  if (!out.ok()) {
    ::close(in);
    return out.status();
  }
  std::string buf(1 << 20, '\0');
  Status status;
  for (;;) {
    ssize_t r = ::read(in, buf.data(), buf.size());
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      status = ErrnoStatus("cannot read", from, errno);
      break;
    }
    if (r == 0) break;
    status = WriteAll(*out, buf.data(), static_cast<size_t>(r), to);
    if (!status.ok()) break;
  }
  ::close(in);
  if (status.ok() && ::fchmod(*out, source.st_mode & 0777) != 0) status = ErrnoStatus("cannot set the modes of", part, errno);
  if (!status.ok()) {
    ::close(*out);
    ::unlink(part.c_str());
    return status;
  }
  return FinishPart(*out, part, to);
}

Status FileStorage::GetToFile(const std::string& uri, const std::string& local_path) {
  return CopyLocalFile(PathOf(uri), local_path);
}

Status FileStorage::PutFromFile(const std::string& local_path, const std::string& uri) {
  return CopyLocalFile(local_path, PathOf(uri));
}

Status FileStorage::PutString(const std::string& uri, const std::string& data) {
  std::string path = PathOf(uri);
  std::string part = path + ".part";
  ASSIGN_OR_RETURN(int fd, CreateForWrite(part));
  Status s = WriteAll(fd, data.data(), data.size(), path);
  if (!s.ok()) {
    ::close(fd);
    ::unlink(part.c_str());
    return s;
  }
  return FinishPart(fd, part, path);
}

Status FileStorage::Copy(const std::string& from_uri, const std::string& to_uri) {
  return CopyLocalFile(PathOf(from_uri), PathOf(to_uri));
}

Status FileStorage::Delete(const std::string& uri) {
  std::string path = PathOf(uri);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return ErrnoStatus("cannot delete", path, errno);
  return Status::Ok();
}

Status FileStorage::DeletePrefix(const std::string& folder_uri) {
  std::string path = PathOf(folder_uri);
  std::error_code ec;
  fs::remove_all(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) return Unavailable("cannot delete " + path + ": " + ec.message());
  return Status::Ok();
}

Status FileStorage::CheckRoot(const std::string& uri) { return Status::Ok(); }

}  // namespace shoal::storage
