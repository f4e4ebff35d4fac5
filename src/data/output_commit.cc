#include "data/output_commit.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>

#include "storage/file/file_storage.h"
#include "storage/parallel.h"

namespace shoal::data {
namespace {

// Whether an object of the destination, named relative to it, is not the commit's to
// replace: the scratch folder and the saved models' folders.
bool KeptBeside(const std::string& rel) {
  if (rel.starts_with(std::string(kTemporaryFolder) + "/")) return true;
  size_t slash = rel.find('/');
  return slash != std::string::npos && IsSavedModelFolder(rel.substr(0, slash));
}

// Whether the object `rel` of `folder` may not be deleted as the destination's: one that
// a file system listed through a symlinked folder (its name then climbs out with "..", or
// a folder on its way is a link). What a link points to is never deleted through it.
bool ThroughALink(const std::string& folder, const std::string& rel) {
  if (rel == ".." || rel.starts_with("../") || rel.find("/../") != std::string::npos) return true;
  std::string scheme = storage::UriScheme(folder);
  if (!scheme.empty() && scheme != "file") return false;
  std::string path = storage::FileStorage::PathOf(folder);
  for (size_t slash = rel.find('/'); slash != std::string::npos; slash = rel.find('/', slash + 1)) {
    struct stat st;
    if (::lstat((path + rel.substr(0, slash)).c_str(), &st) == 0 && S_ISLNK(st.st_mode)) return true;
  }
  return false;
}

constexpr const char* kCommittingPrefix = "committing-";  // _temporary/committing-<tag>: a commit's listing

// The files a listing (_SUCCESS, or a commit's listing under _temporary/) names; none
// when it is missing. Bounded: a listing is Shoal's own, but anyone may have written it.
Result<std::set<std::string>> ReadListing(storage::Storage& store, const std::string& uri) {
  constexpr int64_t kMostListing = 64 << 20;
  Result<storage::ObjectInfo> info = store.Stat(uri);
  if (!info.ok()) {
    if (info.status().code() == StatusCode::kNotFound) return std::set<std::string>();
    return info.status();
  }
  ASSIGN_OR_RETURN(std::string text, store.ReadRange(uri, 0, std::min(info->size, kMostListing)));
  std::set<std::string> files;
  for (size_t start = 0; start < text.size();) {
    size_t end = std::min(text.find('\n', start), text.size());
    if (end > start) files.insert(text.substr(start, end - start));
    start = end + 1;
  }
  return files;
}

// What earlier commits into dest put there: the files its _SUCCESS lists, and those of
// commits that were stopped between copying into place and writing _SUCCESS (their
// listings stay under _temporary/ until a commit completes).
Result<std::set<std::string>> EarlierCommits(storage::Storage& store, const std::string& dest) {
  ASSIGN_OR_RETURN(std::set<std::string> files, ReadListing(store, storage::JoinUri(dest, kSuccessMarker)));
  const std::string scratch = storage::JoinUri(dest, kTemporaryFolder) + "/";
  ASSIGN_OR_RETURN(std::vector<storage::ObjectInfo> temporary, store.List(scratch));
  for (const storage::ObjectInfo& object : temporary) {
    std::string name = object.uri.substr(std::min(object.uri.size(), scratch.size()));
    if (!name.starts_with(kCommittingPrefix) || name.find('/') != std::string::npos) continue;
    ASSIGN_OR_RETURN(std::set<std::string> listed, ReadListing(store, object.uri));
    files.merge(listed);
  }
  return files;
}

// Deletes the objects of dest that an earlier commit put there (`earlier`) and this one
// does not commit (`files`). Nothing else is ever deleted: what the user or another
// program keeps beside an output stays.
Status RemoveStale(storage::Storage& store, const std::string& dest, const std::set<std::string>& earlier,
                   const std::set<std::string>& files, int parallelism) {
  std::string folder = dest.ends_with('/') ? dest : dest + "/";
  ASSIGN_OR_RETURN(std::vector<storage::ObjectInfo> listed, store.List(folder));
  std::vector<std::string> stale;
  for (const storage::ObjectInfo& object : listed) {
    if (!object.uri.starts_with(folder)) continue;
    std::string rel = object.uri.substr(folder.size());
    bool kept = rel.empty() || rel == kSuccessMarker || files.count(rel) || KeptBeside(rel) || !earlier.count(rel);
    if (kept || ThroughALink(folder, rel)) continue;
    stale.push_back(object.uri);
  }
  return storage::RunParallel(static_cast<int>(stale.size()), parallelism, [&](int i) {
    const std::string& uri = stale[static_cast<size_t>(i)];
    return store.Delete(uri).WithContext("removing " + uri + ", left by an earlier commit");
  });
}

}  // namespace

Result<std::vector<std::string>> LocalFiles(const std::string& folder) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::exists(folder, ec)) return out;
  for (fs::recursive_directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) out.push_back(fs::relative(it->path(), folder, ec).generic_string());
  }
  if (ec) return Unavailable("cannot list the output folder " + folder + ": " + ec.message());
  std::sort(out.begin(), out.end());
  return out;
}

bool IsSavedModelFolder(const std::string& name) {
  static const std::regex pattern(R"(saved-\d{8}-\d{6}(-\d+)?)");
  return std::regex_match(name, pattern);
}

Status CommitFolder(const std::string& local_folder, const std::string& dest_uri, const std::string& tag,
                    const CommitOptions& options) {
  ASSIGN_OR_RETURN(std::shared_ptr<storage::Storage> store, storage::OpenStorage(dest_uri));
  ASSIGN_OR_RETURN(std::vector<std::string> files, LocalFiles(local_folder));
  const std::string marker = storage::JoinUri(dest_uri, kSuccessMarker);
  const std::string scratch = storage::JoinUri(dest_uri, kTemporaryFolder);
  const std::string temp = storage::JoinUri(scratch, tag);
  Result<std::set<std::string>> read_earlier = EarlierCommits(*store, dest_uri);
  if (!read_earlier.ok()) {
    return read_earlier.status().WithContext("output " + dest_uri + " not committed: reading what earlier commits left");
  }
  const std::set<std::string>& earlier = *read_earlier;
  RETURN_IF_ERROR(store->Delete(marker));
  auto cancelled = [&] { return options.cancel && options.cancel->load(); };
  // Runs step(0..n-1) in parallel; once the task is being stopped no new step starts.
  auto each = [&](size_t n, const std::function<Status(size_t)>& step) {
    return storage::RunParallel(static_cast<int>(n), options.parallelism, [&](int i) {
      if (cancelled()) return Aborted("the task is being stopped");
      return step(static_cast<size_t>(i));
    });
  };
  std::vector<char> present(files.size(), 0);  // false: the program removed the file meanwhile
  Status status = each(files.size(), [&](size_t i) -> Status {
    const std::string& rel = files[i];
    Result<bool> uploaded =
        UploadSettled(*store, local_folder + "/" + rel, storage::JoinUri(temp, rel), options.settle);
    if (!uploaded.ok()) return uploaded.status().WithContext("uploading " + local_folder + "/" + rel);
    present[i] = *uploaded;
    return Status::Ok();
  });
  std::vector<std::string> committed;
  for (size_t i = 0; i < files.size(); ++i) {
    if (present[i]) committed.push_back(files[i]);
  }
  std::string listing;
  for (const auto& rel : committed) listing += rel + "\n";
  // Until _SUCCESS is written, this listing says what the copies into place put there.
  if (status.ok()) status = store->PutString(storage::JoinUri(scratch, kCommittingPrefix + tag), listing);
  if (status.ok()) {
    status = each(committed.size(), [&](size_t i) {
      const std::string& rel = committed[i];
      return store->Copy(storage::JoinUri(temp, rel), storage::JoinUri(dest_uri, rel)).WithContext("committing " + rel);
    });
  }
  if (status.ok() && !cancelled()) {
    status = RemoveStale(*store, dest_uri, earlier, {committed.begin(), committed.end()}, options.parallelism);
  }
  if (status.ok() && cancelled()) status = Aborted("the task is being stopped");
  if (status.ok()) status = store->PutString(marker, listing);
  if (!status.ok()) {
    (void)store->DeletePrefix(temp);  // best effort: the next commit into dest sweeps what stays
    return status.WithContext("output " + dest_uri + " not committed");
  }
  return store->DeletePrefix(scratch).WithContext("output " + dest_uri + " committed, but its temporary copies stay");
}

}  // namespace shoal::data
