#include "train/uri.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "common/files.h"
#include "storage/local_names.h"
#include "storage/storage.h"

namespace shoal::train {

namespace {

bool IsFileUri(const std::string& uri) { return uri.rfind("file:", 0) == 0; }

// The absolute path of a file: URI (file:/p, file:///p, file://localhost/p), or why not.
Result<std::string> FilePath(const std::string& uri) {
  std::string rest = uri.substr(5);
  if (rest.rfind("//", 0) == 0) {
    size_t slash = rest.find('/', 2);
    std::string host = rest.substr(2, slash == std::string::npos ? std::string::npos : slash - 2);
    if (slash == std::string::npos || (!host.empty() && host != "localhost")) {
      return InvalidArgument(uri + " names a file on host '" + host +
                             "'; shoal train reads and writes this machine's files: use file:///absolute/path "
                             "(a shared file system) or s3://bucket/key");
    }
    return rest.substr(slash);
  }
  if (rest.empty() || rest[0] != '/') {
    return InvalidArgument(uri + " is not an absolute file URI: write file:/absolute/path or file:///absolute/path, "
                           "or a relative path without file:");
  }
  return rest;
}

// Outside a task, remote inputs go to a folder of this process's own: made with mkdtemp
// (mode 0700) under $TMPDIR on first use and removed with its copies when the process
// exits. A fixed, shared folder would let another account plant a file where a run looks
// for its copy, and would hand every later run the copy of the first, however the object
// changed since.
class PrivateCache {
 public:
  PrivateCache() {
    std::error_code ec;
    std::filesystem::path temp = std::filesystem::temp_directory_path(ec);
    std::string pattern = ((ec ? std::filesystem::path("/tmp") : temp) / "shoal-train-cache-XXXXXX").string();
    auto folder = MakePrivateFolder(pattern, "remote inputs");
    if (folder.ok()) path_ = *folder;
    else error_ = folder.status().message();
  }
  ~PrivateCache() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  Result<std::filesystem::path> path() const {
    if (path_.empty()) return Unavailable(error_ + "; set TMPDIR to a writable folder");
    return std::filesystem::path(path_);
  }

 private:
  std::string path_, error_;
};

// Where remote inputs are cached: the task's folder in a job, else this process's own.
Result<std::filesystem::path> CacheFolder() {
  const char* task_dir = std::getenv("SHOAL_TASK_DIR");
  if (task_dir != nullptr && *task_dir != '\0') return std::filesystem::path(task_dir) / "train-cache";
  static const PrivateCache cache;
  return cache.path();
}

}  // namespace

std::string LocalPath(const std::string& uri) {
  if (!IsFileUri(uri)) return uri;
  auto path = FilePath(uri);
  return path.ok() ? *path : uri;
}

std::string PlainUri(const std::string& uri) { return IsLocal(uri) ? LocalPath(uri) : uri; }

bool IsLocal(const std::string& uri) {
  std::string scheme = storage::UriScheme(uri);
  return scheme.empty() || scheme == "file";
}

Status CheckUri(const std::string& uri, const std::string& what) {
  if (uri.empty()) return InvalidArgument(what + " is empty");
  if (IsFileUri(uri)) return FilePath(uri).status().WithContext(what);
  auto opened = storage::OpenStorage(uri);
  if (!opened.ok()) return opened.status().WithContext(what);
  return Status::Ok();
}

Result<std::string> LocalCopy(const std::string& uri) {
  RETURN_IF_ERROR(CheckUri(uri, "input"));
  if (IsLocal(uri)) return LocalPath(uri);
  ASSIGN_OR_RETURN(std::filesystem::path cache, CacheFolder());
  std::string base = uri;
  while (!base.empty() && base.back() == '/') base.pop_back();
  std::filesystem::path local = cache / std::to_string(std::hash<std::string>{}(base)) / base.substr(base.rfind('/') + 1);
  if (std::filesystem::exists(local)) return local.string();
  ASSIGN_OR_RETURN(auto store, storage::OpenStorage(uri));
  ASSIGN_OR_RETURN(auto objects, storage::Expand(*store, base));
  std::filesystem::path partial = local.string() + ".part." + std::to_string(getpid());
  for (const auto& object : objects) {
    // One object named exactly: a file; otherwise a folder of objects (an LMDB).
    std::filesystem::path target = partial;
    if (object.uri != base) {
      ASSIGN_OR_RETURN(std::string name, storage::LocalName(object.uri, base + "/"));
      target /= name;
    }
    std::error_code ec;
    std::filesystem::create_directories(target.parent_path(), ec);
    RETURN_IF_ERROR(store->GetToFile(object.uri, target.string()));
  }
  std::error_code ec;
  std::filesystem::rename(partial, local, ec);
  if (ec && !std::filesystem::exists(local)) return Unavailable("cannot cache " + uri + " at " + local.string() + ": " + ec.message());
  return local.string();
}

Result<std::string> ReadFileBytes(const std::string& uri) {
  ASSIGN_OR_RETURN(std::string path, LocalCopy(uri));
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read " + uri + ": no such file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Status WriteFileAtomic(const std::string& uri, const std::string& data) {
  RETURN_IF_ERROR(CheckUri(uri, "output"));
  if (!IsLocal(uri)) {
    ASSIGN_OR_RETURN(auto store, storage::OpenStorage(uri));
    return store->PutString(uri, data);
  }
  std::filesystem::path path(LocalPath(uri));
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  std::string tmp = path.string() + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Unavailable("cannot write " + tmp);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      return ResourceExhausted("cannot write " + tmp + " (disk full?)");
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Unavailable("cannot rename " + tmp + " to " + path.string() + ": " + ec.message());
  return Status::Ok();
}

std::string UriDir(const std::string& uri) {
  auto slash = uri.rfind('/');
  if (slash == std::string::npos) return "";
  return uri.substr(0, slash);
}

std::string UriJoin(const std::string& dir, const std::string& name) {
  if (dir.empty() || (!name.empty() && name[0] == '/') || name.find("://") != std::string::npos || IsFileUri(name)) return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

}  // namespace shoal::train
