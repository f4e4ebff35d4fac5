#include "data/output_commit.h"

#include <algorithm>
#include <filesystem>

#include "storage/parallel.h"

namespace shoal::data {

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

Status CommitFolder(const std::string& local_folder, const std::string& dest_uri, const std::string& tag,
                    int parallelism, const std::atomic<bool>* cancel) {
  ASSIGN_OR_RETURN(std::shared_ptr<storage::Storage> store, storage::OpenStorage(dest_uri));
  ASSIGN_OR_RETURN(std::vector<std::string> files, LocalFiles(local_folder));
  const std::string marker = storage::JoinUri(dest_uri, kSuccessMarker);
  const std::string temp = storage::JoinUri(dest_uri, std::string(kTemporaryFolder) + "/" + tag);
  RETURN_IF_ERROR(store->Delete(marker));
  auto each = [&](const std::function<Status(const std::string&)>& step) {
    return storage::RunParallel(static_cast<int>(files.size()), parallelism,
                                [&](int i) { return step(files[static_cast<size_t>(i)]); });
  };
  auto cancelled = [&] { return cancel && cancel->load(); };
  Status status = each([&](const std::string& rel) {
    if (cancelled()) return Aborted("the task is being stopped");
    return store->PutFromFile(local_folder + "/" + rel, storage::JoinUri(temp, rel))
        .WithContext("uploading " + local_folder + "/" + rel);
  });
  if (status.ok()) {
    status = each([&](const std::string& rel) {
      if (cancelled()) return Aborted("the task is being stopped");
      return store->Copy(storage::JoinUri(temp, rel), storage::JoinUri(dest_uri, rel))
          .WithContext("committing " + rel);
    });
  }
  std::string listing;
  for (const auto& rel : files) listing += rel + "\n";
  if (status.ok() && cancelled()) status = Aborted("the task is being stopped");
  if (status.ok()) status = store->PutString(marker, listing);
  if (!status.ok() && cancelled()) return status.WithContext("output " + dest_uri + " not committed");
  // The temporary copies go whatever happened (a killed task leaves them, never _SUCCESS).
  Status cleanup = each([&](const std::string& rel) { return store->Delete(storage::JoinUri(temp, rel)); });
  if (!status.ok()) return status.WithContext("output " + dest_uri + " not committed");
  return cleanup;
}

}  // namespace shoal::data
