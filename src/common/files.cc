#include "common/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace shoal {

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read '" + path + "': " + strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Result<std::string> ReadFileUpTo(const std::string& path, size_t max_bytes) {
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return FailedPrecondition("'" + path + "' is a folder");
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read '" + path + "': " + strerror(errno));
  std::string text(max_bytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > max_bytes) {
    return FailedPrecondition("'" + path + "' is larger than " + std::to_string(max_bytes >> 20) + " MiB");
  }
  return text;
}

Result<std::string> ReadFileTail(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return NotFound("cannot read '" + path + "': " + strerror(errno));
  std::streamoff size = in.tellg();
  std::streamoff start = size > static_cast<std::streamoff>(max_bytes) ? size - static_cast<std::streamoff>(max_bytes) : 0;
  in.seekg(start);
  std::string text(static_cast<size_t>(size - start), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

Status WriteFileAtomic(const std::string& path, const std::string& content) {
  std::string tmp = path + ".tmp-" + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Unavailable("cannot write '" + tmp + "': " + strerror(errno));
    out << content;
    out.flush();
    if (!out) return ResourceExhausted("cannot write '" + tmp + "': " + strerror(errno));
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    std::string reason = strerror(errno);
    unlink(tmp.c_str());
    return Unavailable("cannot rename '" + tmp + "' to '" + path + "': " + reason);
  }
  return Status::Ok();
}

Status WriteSecretFileAtomic(const std::string& path, const std::string& content) {
  std::string tmp = path + ".tmp-" + std::to_string(getpid());
  unlink(tmp.c_str());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return Unavailable("cannot create '" + tmp + "': " + strerror(errno));
  bool written = write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size());
  written = fchmod(fd, 0600) == 0 && written;  // whatever the umask
  close(fd);
  if (!written || rename(tmp.c_str(), path.c_str()) != 0) {
    std::string reason = strerror(errno);
    unlink(tmp.c_str());
    return Unavailable("cannot write '" + path + "': " + reason);
  }
  return Status::Ok();
}

Status MakeDirectories(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return Unavailable("cannot create directory '" + path + "': " + ec.message());
  return Status::Ok();
}

Result<std::string> MakePrivateFolder(const std::string& pattern, const std::string& purpose) {
  std::string folder = pattern;
  if (mkdtemp(folder.data()) == nullptr) {
    return Unavailable("cannot make a folder like " + pattern + " for " + purpose + ": " + std::strerror(errno));
  }
  return folder;
}

std::string DirName(const std::string& path) {
  std::filesystem::path p(path);
  std::string parent = p.parent_path().string();
  return parent.empty() ? "." : parent;
}

std::string AbsolutePath(const std::string& path) {
  std::error_code ec;
  auto abs = std::filesystem::absolute(path, ec);
  return ec ? path : abs.lexically_normal().string();
}

}  // namespace shoal
