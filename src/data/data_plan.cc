#include "data/data_plan.h"

#include <algorithm>
#include <set>

#include "common/secret.h"

#include "data/split.h"
#include "storage/glob.h"
#include "storage/local_names.h"
#include "storage/storage.h"

namespace shoal::data {
namespace {

// The tasks an input goes to, in rank order.
std::vector<std::pair<std::string, int>> TasksOf(const JobSpec& spec, const std::vector<std::string>& roles) {
  std::vector<std::pair<std::string, int>> tasks;
  for (const RoleSpec& role : spec.roles) {
    bool chosen = roles.empty() ? !role.service : std::find(roles.begin(), roles.end(), role.name) != roles.end();
    if (!chosen) continue;
    for (int i = 0; i < role.instances; ++i) tasks.emplace_back(role.name, i);
  }
  return tasks;
}

// The part of the URI that local names are relative to.
std::string BaseOf(const std::string& uri, const std::vector<storage::ObjectInfo>& files) {
  if (storage::HasGlob(uri)) return storage::GlobPrefix(uri);
  if (files.size() == 1 && files[0].uri == uri) return uri.substr(0, uri.rfind('/') + 1);
  return uri.back() == '/' ? uri : uri + "/";
}

// A download input's objects land in the task's folder under their names past the base.
Status CheckDownloadNames(const InputSpec& input, const std::vector<storage::ObjectInfo>& files) {
  if (input.mode != InputMode::kDownload) return Status::Ok();
  return storage::CheckLocalNames(files, BaseOf(input.uri, files)).WithContext("input \"" + input.name + "\"");
}

}  // namespace

Result<DataPlan> DataPlan::Make(const JobSpec& spec) {
  DataPlan plan;
  for (const RoleSpec& role : spec.roles) {
    for (int i = 0; i < role.instances; ++i) {
      plan.inputs_[{role.name, i}] = Json::array();
      plan.outputs_[{role.name, i}] = Json::array();
    }
  }
  for (const InputSpec& input : spec.inputs) {
    ASSIGN_OR_RETURN(std::vector<storage::ObjectInfo> files, storage::ExpandUri(input.uri));
    RETURN_IF_ERROR(CheckDownloadNames(input, files));
    auto tasks = TasksOf(spec, input.roles);
    int n = static_cast<int>(tasks.size());
    auto shares = input.mode == InputMode::kStream ? SplitRanges(files, n) : SplitWholeFiles(files, n);
    for (int t = 0; t < n; ++t) {
      plan.inputs_[tasks[static_cast<size_t>(t)]].push_back(
          {{"name", input.name}, {"mode", Name(input.mode)}, {"path", input.path}, {"epochs", input.epochs},
           {"shuffle", input.shuffle}, {"base", BaseOf(input.uri, files)},
           {"shards", ShardsToJson(shares[static_cast<size_t>(t)])}});
    }
  }
  // Every task gets every output's folder; the tasks that do not commit it (those `from`
  // does not pick, and service roles) get it as scratch space.
  std::vector<std::pair<std::string, int>> committers = TasksOf(spec, {});
  for (const OutputSpec& output : spec.outputs) {
    std::string root = output.uri;
    while (root.size() > 1 && root.back() == '/') root.pop_back();
    for (const auto& [task, entries] : plan.outputs_) {
      std::string name = task.first + "[" + std::to_string(task.second) + "]";
      bool commits = output.from.empty() ? std::find(committers.begin(), committers.end(), task) != committers.end()
                                         : output.from == name;
      std::string suffix = output.from.empty() ? "/" + task.first + "-" + std::to_string(task.second) : "";
      plan.outputs_[task].push_back({{"name", output.name}, {"path", output.path}, {"root", root},
                                     {"suffix", suffix}, {"on_failure", output.on_failure}, {"commit", commits}});
    }
  }
  return plan;
}

Json DataPlan::InputsFor(const std::string& role, int index) const {
  auto it = inputs_.find({role, index});
  return it == inputs_.end() ? Json::array() : it->second;
}

Json DataPlan::OutputsFor(const std::string& role, int index) const {
  auto it = outputs_.find({role, index});
  return it == outputs_.end() ? Json::array() : it->second;
}

std::vector<std::pair<std::string, int>> DataPlan::OutputTasks() const {
  std::vector<std::pair<std::string, int>> out;
  for (const auto& [task, outputs] : outputs_) {
    if (std::any_of(outputs.begin(), outputs.end(), [](const Json& o) { return o.value("commit", true); })) {
      out.push_back(task);
    }
  }
  return out;
}

std::string SavedModelRoot(const std::string& output_uri, const std::string& name) {
  std::string root = output_uri;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  return root + "/saved-" + name;
}

std::vector<std::string> SavedModelFolders(const JobSpec& spec, const std::string& name) {
  std::vector<std::string> folders;
  for (const OutputSpec& output : spec.outputs) folders.push_back(SavedModelRoot(output.uri, name) + "/");
  return folders;
}

Status ValidateData(const JobSpec& spec) {
  for (const InputSpec& input : spec.inputs) {
    Result<std::vector<storage::ObjectInfo>> files = storage::ExpandUri(input.uri);
    if (!files.ok()) return files.status().WithContext("input \"" + input.name + "\"");
    RETURN_IF_ERROR(CheckDownloadNames(input, *files));
  }
  for (const OutputSpec& output : spec.outputs) {
    ASSIGN_OR_RETURN(std::shared_ptr<storage::Storage> store, storage::OpenStorage(output.uri));
    RETURN_IF_ERROR(store->CheckRoot(output.uri).WithContext("output \"" + output.name + "\""));
  }
  std::set<std::string> checkpoints;
  if (spec.checkpoint) checkpoints.insert(spec.checkpoint->uri);
  for (const RoleSpec& role : spec.roles) {
    if (role.checkpoint) checkpoints.insert(role.checkpoint->uri);
  }
  for (const std::string& uri : checkpoints) RETURN_IF_ERROR(CheckWritable(uri, "checkpoint.uri"));
  return Status::Ok();
}

Status CheckWritable(const std::string& uri, const std::string& field) {
  ASSIGN_OR_RETURN(std::shared_ptr<storage::Storage> store, storage::OpenStorage(uri));
  RETURN_IF_ERROR(store->CheckRoot(uri).WithContext(field));
  ASSIGN_OR_RETURN(std::string nonce, RandomToken(8));
  std::string probe = storage::JoinUri(uri, "_shoal-write-probe-" + nonce);
  if (Status written = store->PutString(probe, ""); !written.ok()) {
    return InvalidArgument(field + ": cannot write to '" + uri + "' (" + written.message() +
                           "); give a folder this job's account can create and write");
  }
  (void)store->Delete(probe);
  return Status::Ok();
}

}  // namespace shoal::data
