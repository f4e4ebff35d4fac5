#include "storage/mem/mem_storage.h"

#include <algorithm>

#include "common/files.h"
#include "storage/local_io.h"

namespace shoal::storage {
namespace {
constexpr const char* kMem = "mem://";
}

MemStorage& MemStorage::Shared() {
  static MemStorage* storage = new MemStorage();
  return *storage;
}

std::shared_ptr<Storage> MemStorage::SharedHandle() {
  return std::shared_ptr<Storage>(&Shared(), [](Storage*) {});
}

void MemStorage::CreateBucket(const std::string& bucket) {
  std::lock_guard lock(mu_);
  buckets_.insert(bucket);
}

void MemStorage::FailNext(int calls, Status status, int after) {
  std::lock_guard lock(mu_);
  fail_calls_ = calls;
  fail_after_ = after;
  fail_status_ = std::move(status);
}

std::vector<std::string> MemStorage::Keys() {
  std::lock_guard lock(mu_);
  std::vector<std::string> keys;
  for (const auto& [k, v] : objects_) keys.push_back(k);
  return keys;
}

void MemStorage::StartUpload(const std::string& uri) {
  std::lock_guard lock(mu_);
  if (Result<std::string> key = KeyOf(uri); key.ok()) uploads_.insert(*key);
}

std::vector<std::string> MemStorage::Uploads() {
  std::lock_guard lock(mu_);
  return {uploads_.begin(), uploads_.end()};
}

void MemStorage::OnUpload(std::function<void(const std::string& uri)> hook) {
  std::lock_guard lock(mu_);
  on_upload_ = std::move(hook);
}

Status MemStorage::Injected() {
  if (fail_calls_ <= 0) return Status::Ok();
  if (fail_after_ > 0) {
    --fail_after_;
    return Status::Ok();
  }
  --fail_calls_;
  return fail_status_;
}

Result<std::string> MemStorage::KeyOf(const std::string& uri) {
  RETURN_IF_ERROR(Injected());
  if (uri.rfind(kMem, 0) != 0) return InvalidArgument("not a mem:// URI: " + uri);
  std::string rest = uri.substr(6);
  std::string bucket = rest.substr(0, rest.find('/'));
  if (!buckets_.count(bucket)) return NotFound("the bucket \"" + bucket + "\" of " + uri + " does not exist");
  return rest;
}

Result<std::vector<ObjectInfo>> MemStorage::List(const std::string& prefix_uri) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(std::string prefix, KeyOf(prefix_uri));
  std::vector<ObjectInfo> out;
  for (auto it = objects_.lower_bound(prefix); it != objects_.end() && it->first.rfind(prefix, 0) == 0; ++it) {
    out.push_back({kMem + it->first, static_cast<int64_t>(it->second.size()), 0});
  }
  return out;
}

Result<ObjectInfo> MemStorage::Stat(const std::string& uri) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(std::string key, KeyOf(uri));
  auto it = objects_.find(key);
  if (it == objects_.end()) return NotFound("no object " + uri);
  return ObjectInfo{uri, static_cast<int64_t>(it->second.size()), 0};
}

Result<std::string> MemStorage::ReadRange(const std::string& uri, int64_t offset, int64_t length) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(std::string key, KeyOf(uri));
  auto it = objects_.find(key);
  if (it == objects_.end()) return NotFound("no object " + uri);
  if (offset >= static_cast<int64_t>(it->second.size())) return std::string();
  return it->second.substr(static_cast<size_t>(offset), static_cast<size_t>(length));
}

Result<std::unique_ptr<Reader>> MemStorage::OpenReader(const std::string& uri) {
  ASSIGN_OR_RETURN(ObjectInfo info, Stat(uri));
  return std::unique_ptr<Reader>(std::make_unique<RangeReader>(*this, uri, info.size, 1 << 16));
}

Status MemStorage::GetToFile(const std::string& uri, const std::string& local_path) {
  ASSIGN_OR_RETURN(ObjectInfo info, Stat(uri));
  ASSIGN_OR_RETURN(std::string bytes, ReadRange(uri, 0, info.size));
  RETURN_IF_ERROR(MakeDirectories(DirName(local_path)));
  return WriteFileAtomic(local_path, bytes);
}

Status MemStorage::PutFromFile(const std::string& local_path, const std::string& uri) {
  ASSIGN_OR_RETURN(std::string bytes, ReadFile(local_path));
  std::function<void(const std::string&)> hook;
  {
    std::lock_guard lock(mu_);
    hook = on_upload_;
  }
  if (hook) hook(uri);
  return PutString(uri, bytes);
}

Status MemStorage::PutString(const std::string& uri, const std::string& data) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(std::string key, KeyOf(uri));
  objects_[key] = data;
  return Status::Ok();
}

Status MemStorage::Copy(const std::string& from_uri, const std::string& to_uri) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(std::string from, KeyOf(from_uri));
  ASSIGN_OR_RETURN(std::string to, KeyOf(to_uri));
  auto it = objects_.find(from);
  if (it == objects_.end()) return NotFound("no object " + from_uri);
  objects_[to] = it->second;
  return Status::Ok();
}

Status MemStorage::Delete(const std::string& uri) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(std::string key, KeyOf(uri));
  objects_.erase(key);
  return Status::Ok();
}

Status MemStorage::DeletePrefix(const std::string& folder_uri) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(std::string folder, KeyOf(folder_uri));
  if (folder.empty() || folder.back() != '/') folder += "/";
  auto under = [&](const std::string& key) { return key.rfind(folder, 0) == 0; };
  std::erase_if(objects_, [&](const auto& entry) { return under(entry.first); });
  std::erase_if(uploads_, under);
  return Status::Ok();
}

Status MemStorage::CheckRoot(const std::string& uri) {
  std::lock_guard lock(mu_);
  return KeyOf(uri).status();
}

}  // namespace shoal::storage
