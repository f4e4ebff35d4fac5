#include "storage/storage.h"

#include "storage/file/file_storage.h"
#include "storage/glob.h"
#include "storage/mem/mem_storage.h"
#include "storage/s3/s3_storage.h"

namespace shoal::storage {

std::string UriScheme(const std::string& uri) {
  size_t colon = uri.find("://");
  if (colon == std::string::npos) return "";
  std::string scheme = uri.substr(0, colon);
  for (char c : scheme) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.') return "";
  }
  return scheme;
}

bool HasGlob(const std::string& uri) { return uri.find_first_of("*?[") != std::string::npos; }

std::string JoinUri(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  bool a_slash = a.back() == '/';
  bool b_slash = b.front() == '/';
  if (a_slash && b_slash) return a + b.substr(1);
  if (a_slash || b_slash) return a + b;
  return a + "/" + b;
}

Result<std::shared_ptr<Storage>> OpenStorage(const std::string& uri) {
  std::string scheme = UriScheme(uri);
  if (scheme.empty() || scheme == "file") {
    static std::shared_ptr<Storage> files = std::make_shared<FileStorage>();
    return files;
  }
  if (scheme == "s3") return SharedS3Storage();
  if (scheme == "mem") return MemStorage::SharedHandle();
  return InvalidArgument("unknown storage scheme \"" + scheme + "://\" in " + uri +
                         ": use a path, file:///path (a shared file system) or s3://bucket/key");
}

Result<std::vector<ObjectInfo>> Expand(Storage& storage, const std::string& uri) {
  RETURN_IF_ERROR(storage.CheckRoot(uri));
  std::vector<ObjectInfo> out;
  if (HasGlob(uri)) {
    ASSIGN_OR_RETURN(std::vector<ObjectInfo> listed, storage.List(GlobPrefix(uri)));
    for (ObjectInfo& info : listed) {
      if (GlobMatch(uri, info.uri)) out.push_back(std::move(info));
    }
  } else if (Result<ObjectInfo> one = storage.Stat(uri); one.ok()) {
    out.push_back(std::move(one).value());
  } else if (one.status().code() != StatusCode::kNotFound) {
    return one.status();
  } else {
    ASSIGN_OR_RETURN(out, storage.List(uri.empty() || uri.back() == '/' ? uri : uri + "/"));
  }
  // A key ending in "/" is a folder marker (what an S3 console's "Create folder" leaves,
  // empty), not a file.
  std::erase_if(out, [](const ObjectInfo& info) { return info.uri.ends_with('/'); });
  if (out.empty()) {
    return NotFound("the input " + uri + " matches no file or object: check the path, bucket and pattern");
  }
  return out;
}

Result<std::vector<ObjectInfo>> ExpandUri(const std::string& uri) {
  ASSIGN_OR_RETURN(std::shared_ptr<Storage> storage, OpenStorage(uri));
  return Expand(*storage, uri);
}

}  // namespace shoal::storage
