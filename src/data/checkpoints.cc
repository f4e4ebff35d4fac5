#include "data/checkpoints.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "common/files.h"
#include "common/units.h"
#include "data/output_commit.h"
#include "data/settled_upload.h"
#include "storage/local_names.h"
#include "storage/parallel.h"

namespace shoal::data {
namespace {

namespace fs = std::filesystem;

constexpr int kTransferParallelism = 4;

std::string WithoutTrailingSlashes(std::string uri) {
  while (uri.size() > 1 && uri.back() == '/') uri.pop_back();
  return uri;
}

// "00000012" -> 12; anything else -> 0.
int ParseRound(const std::string& name) {
  if (name.size() != 8 || name.find_first_not_of("0123456789") != std::string::npos) return 0;
  return std::stoi(name);
}

// The files of one round (their local names in its folder), less Shoal's own and folder
// markers; a name no local file can have (storage/local_names.h) is an error naming it.
Result<std::vector<storage::ObjectInfo>> RoundFiles(storage::Storage& store, const std::string& round_uri,
                                                    std::vector<std::string>* relative) {
  std::string prefix = round_uri + "/";
  ASSIGN_OR_RETURN(std::vector<storage::ObjectInfo> objects, store.List(prefix));
  std::vector<storage::ObjectInfo> files;
  for (auto& object : objects) {
    if (!object.uri.starts_with(prefix) || object.uri.ends_with('/')) continue;
    ASSIGN_OR_RETURN(std::string rel, storage::LocalName(object.uri, prefix));
    if (rel == kSuccessMarker || rel.starts_with(std::string(kTemporaryFolder) + "/")) continue;
    relative->push_back(rel);
    files.push_back(std::move(object));
  }
  return files;
}

std::string Megabytes(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return text;
}

}  // namespace

std::string CheckpointRoot(const std::string& uri, const std::string& job_id) {
  return storage::JoinUri(WithoutTrailingSlashes(uri), job_id);
}

std::string RoundName(int round) {
  char name[16];
  std::snprintf(name, sizeof name, "%08d", round);
  return name;
}

Result<JobRounds> ListRounds(storage::Storage& store, const std::string& root) {
  std::string prefix = WithoutTrailingSlashes(root) + "/";
  ASSIGN_OR_RETURN(std::vector<storage::ObjectInfo> objects, store.List(prefix));
  JobRounds rounds;
  for (const auto& object : objects) {
    if (!object.uri.starts_with(prefix)) continue;
    std::string rel = object.uri.substr(prefix.size());
    size_t task_end = rel.find('/');
    if (task_end == std::string::npos) continue;
    size_t round_end = rel.find('/', task_end + 1);
    if (round_end == std::string::npos) continue;
    int round = ParseRound(rel.substr(task_end + 1, round_end - task_end - 1));
    if (round == 0) continue;
    TaskRounds& task = rounds[rel.substr(0, task_end)];
    task.present.insert(round);
    if (rel.substr(round_end + 1) == kSuccessMarker) task.complete.insert(round);
  }
  return rounds;
}

int CommonRound(const JobRounds& rounds) {
  if (rounds.empty()) return 0;
  std::set<int> common = rounds.begin()->second.complete;
  for (const auto& [task, r] : rounds) {
    std::set<int> both;
    std::set_intersection(common.begin(), common.end(), r.complete.begin(), r.complete.end(),
                          std::inserter(both, both.end()));
    common = std::move(both);
  }
  return common.empty() ? 0 : *common.rbegin();
}

std::vector<int> RoundsToPrune(const TaskRounds& rounds, int keep) {
  std::vector<int> prune;
  if (rounds.complete.empty()) return prune;
  int newest = *rounds.complete.rbegin();
  std::vector<int> complete(rounds.complete.rbegin(), rounds.complete.rend());  // newest first
  std::set<int> kept(complete.begin(), complete.begin() + std::min<size_t>(complete.size(), std::max(keep, 1)));
  for (int round : rounds.present) {
    if (round < newest && !kept.count(round)) prune.push_back(round);
  }
  return prune;
}

Result<int> PrepareResume(const JobSpec& spec, const std::string& job_id) {
  // Every checkpoint root of the job, and every task's rounds under any of them.
  std::map<std::string, std::shared_ptr<storage::Storage>> roots;
  for (const RoleSpec& role : spec.roles) {
    const CheckpointSpec* checkpoint = spec.CheckpointOf(role);
    if (!checkpoint) continue;
    std::string root = CheckpointRoot(checkpoint->uri, job_id);
    if (roots.count(root)) continue;
    ASSIGN_OR_RETURN(roots[root], storage::OpenStorage(root));
  }
  std::map<std::string, JobRounds> by_root;
  JobRounds all;
  for (const auto& [root, store] : roots) {
    auto rounds = ListRounds(*store, root);
    if (!rounds.ok()) return rounds.status().WithContext("reading the checkpoints at " + root);
    for (const auto& [task, r] : *rounds) {
      TaskRounds& merged = all[task];
      merged.complete.insert(r.complete.begin(), r.complete.end());
      merged.present.insert(r.present.begin(), r.present.end());
    }
    by_root[root] = std::move(rounds).value();
  }
  int resume = CommonRound(all);
  for (const auto& [root, rounds] : by_root) {
    for (const auto& [task, r] : rounds) {
      for (auto round = r.present.upper_bound(resume); round != r.present.end(); ++round) {
        std::string uri = storage::JoinUri(storage::JoinUri(root, task), RoundName(*round));
        if (Status s = roots[root]->DeletePrefix(uri); !s.ok()) return s.WithContext("deleting checkpoint " + uri);
      }
    }
  }
  return resume;
}

TaskCheckpoints::TaskCheckpoints(CheckpointSpec spec, std::string task_uri, std::string folder, std::string staging)
    : spec_(std::move(spec)), task_uri_(WithoutTrailingSlashes(task_uri)), folder_(std::move(folder)),
      staging_(std::move(staging)) {}

TaskCheckpoints::~TaskCheckpoints() {
  if (uploader_.joinable()) uploader_.join();
}

Status TaskCheckpoints::Restore(int round, std::map<std::string, std::string>& env) {
  RETURN_IF_ERROR(MakeDirectories(folder_));
  ::chmod(folder_.c_str(), 0700);
  env["SHOAL_CHECKPOINT_DIR"] = folder_;
  env["SHOAL_CHECKPOINT_MARKER"] = folder_ + "/" + kCheckpointMarker;
  next_round_ = round + 1;
  if (round <= 0) return Status::Ok();
  std::string round_uri = storage::JoinUri(task_uri_, RoundName(round));
  ASSIGN_OR_RETURN(std::shared_ptr<storage::Storage> store, storage::OpenStorage(round_uri));
  std::vector<std::string> relative;
  ASSIGN_OR_RETURN(std::vector<storage::ObjectInfo> files, RoundFiles(*store, round_uri, &relative));
  auto started = std::chrono::steady_clock::now();
  int64_t bytes = 0;
  for (const auto& file : files) bytes += file.size;
  RETURN_IF_ERROR(storage::RunParallel(static_cast<int>(files.size()), kTransferParallelism, [&](int i) -> Status {
    std::string local = folder_ + "/" + relative[i];
    RETURN_IF_ERROR(MakeDirectories(fs::path(local).parent_path().string()));
    return store->GetToFile(files[i].uri, local).WithContext("restoring checkpoint round " + std::to_string(round));
  }));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  char line[160];
  std::snprintf(line, sizeof line, " (%zu files, %s, %.1f s)", files.size(), Megabytes(bytes).c_str(), seconds);
  Note("restored checkpoint round " + std::to_string(round) + " from " + round_uri + line);
  return Status::Ok();
}

void TaskCheckpoints::Poll() {
  if (uploading_) return;
  if (uploader_.joinable()) uploader_.join();
  struct stat st;
  if (::stat((folder_ + "/" + kCheckpointMarker).c_str(), &st) == 0) Take();
}

void TaskCheckpoints::Take() {
  int round = next_round_++;
  std::string copy = staging_ + "/" + RoundName(round);
  Status copied = [&]() -> Status {
    std::error_code ignored;
    fs::remove_all(copy, ignored);
    RETURN_IF_ERROR(MakeDirectories(copy));
    ASSIGN_OR_RETURN(std::vector<std::string> files, LocalFiles(folder_));
    ASSIGN_OR_RETURN(std::shared_ptr<storage::Storage> local, storage::OpenStorage(copy));
    for (const std::string& file : files) {
      if (file == kCheckpointMarker) continue;
      std::string to = copy + "/" + file;
      RETURN_IF_ERROR(MakeDirectories(fs::path(to).parent_path().string()));
      RETURN_IF_ERROR(UploadSettled(*local, folder_ + "/" + file, to, {}).status());
    }
    return Status::Ok();
  }();
  // Taken (or not takeable): the program may go on to its next checkpoint.
  std::error_code ignored;
  fs::remove(folder_ + "/" + kCheckpointMarker, ignored);
  if (!copied.ok()) {
    fs::remove_all(copy, ignored);
    Note("checkpoint round " + std::to_string(round) + " not taken: " + copied.message());
    std::lock_guard lock(mu_);
    last_error_ = copied;
    return;
  }
  uploading_ = true;
  uploader_ = std::thread([this, round, copy] { Upload(round, copy); });
}

void TaskCheckpoints::Upload(int round, std::string copy) {
  std::string round_uri = storage::JoinUri(task_uri_, RoundName(round));
  auto started = std::chrono::steady_clock::now();
  Status status = CommitFolder(copy, round_uri, "round-" + RoundName(round), {.parallelism = kTransferParallelism});
  int64_t bytes = 0;
  size_t count = 0;
  if (auto files = LocalFiles(copy); files.ok()) {
    count = files->size();
    std::error_code ec;
    for (const auto& file : *files) bytes += static_cast<int64_t>(fs::file_size(copy + "/" + file, ec));
  }
  std::error_code ignored;
  fs::remove_all(copy, ignored);
  if (status.ok()) {
    // Older rounds beyond `keep`: a failure to delete them costs space, not the checkpoint.
    if (auto store = storage::OpenStorage(task_uri_); store.ok()) {
      std::string root = task_uri_.substr(0, task_uri_.rfind('/'));
      std::string task = task_uri_.substr(task_uri_.rfind('/') + 1);
      if (auto rounds = ListRounds(**store, root); rounds.ok() && rounds->count(task)) {
        for (int old : RoundsToPrune(rounds->at(task), spec_.keep)) {
          (void)(*store)->DeletePrefix(storage::JoinUri(task_uri_, RoundName(old)));
        }
      }
    }
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    char line[160];
    std::snprintf(line, sizeof line, " (%zu files, %s, %.1f s)", count, Megabytes(bytes).c_str(), seconds);
    Note("checkpoint round " + std::to_string(round) + " uploaded to " + round_uri + line);
  } else {
    Note("checkpoint round " + std::to_string(round) + " failed to upload: " + status.message());
  }
  {
    std::lock_guard lock(mu_);
    last_error_ = status;
  }
  uploading_ = false;
}

Status TaskCheckpoints::Finish() {
  if (uploader_.joinable()) uploader_.join();
  struct stat st;
  if (::stat((folder_ + "/" + kCheckpointMarker).c_str(), &st) == 0) Take();
  if (uploader_.joinable()) uploader_.join();
  std::lock_guard lock(mu_);
  return last_error_;
}

std::vector<std::string> TaskCheckpoints::TakeNotes() {
  std::lock_guard lock(mu_);
  return std::exchange(notes_, {});
}

void TaskCheckpoints::Note(const std::string& line) {
  std::lock_guard lock(mu_);
  notes_.push_back(line);
}

}  // namespace shoal::data
