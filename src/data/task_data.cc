#include "data/task_data.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <functional>

#include "common/files.h"
#include "common/log.h"
#include "data/data_plan.h"
#include "data/line_stream.h"
#include "data/output_commit.h"
#include "data/split.h"
#include "spec/data_variables.h"
#include "storage/local_names.h"
#include "storage/parallel.h"
#include "storage/storage.h"

namespace shoal::data {
namespace {

constexpr size_t kMaxListVariable = 32 << 10;

Status Download(const Json& input, const std::string& folder) {
  std::vector<Shard> shards = ShardsFromJson(input["shards"]);
  std::string base = input.value("base", "");
  RETURN_IF_ERROR(MakeDirectories(folder));
  // The owner's alone: never wider than the folders the data came from (each file keeps
  // its own permission bits where its storage has them, storage/storage.h).
  if (::chmod(folder.c_str(), 0700) != 0) return Unavailable("cannot make " + folder + " private: " + std::strerror(errno));
  return storage::RunParallel(static_cast<int>(shards.size()), 4, [&](int i) -> Status {
    const Shard& shard = shards[static_cast<size_t>(i)];
    ASSIGN_OR_RETURN(std::shared_ptr<storage::Storage> store, storage::OpenStorage(shard.uri));
    ASSIGN_OR_RETURN(std::string name, storage::LocalName(shard.uri, base));
    return store->GetToFile(shard.uri, folder + "/" + name);
  });
}

}  // namespace

TaskData::TaskData(Json inputs, Json outputs, std::string task_dir, std::string task_name)
    : inputs_(inputs.is_array() ? std::move(inputs) : Json::array()),
      outputs_(outputs.is_array() ? std::move(outputs) : Json::array()),
      task_dir_(std::move(task_dir)),
      task_name_(std::move(task_name)) {}

TaskData::~TaskData() {
  Finish();
  std::vector<std::thread> savers;
  {
    std::lock_guard lock(mu_);
    savers.swap(savers_);
  }
  for (auto& t : savers) t.join();
  if (stdin_read_ >= 0) ::close(stdin_read_);
}

bool TaskData::Commits(const Json& output) { return output.value("commit", true); }

bool TaskData::has_outputs() const {
  return std::any_of(outputs_.begin(), outputs_.end(), [](const Json& o) { return Commits(o); });
}

std::string TaskData::LocalFolder(const Json& entry) const {
  return task_dir_ + "/" + entry.value("path", entry.value("name", ""));
}

Status TaskData::Prepare(std::map<std::string, std::string>& env) {
  bool streams = false;
  for (const Json& input : inputs_) {
    std::string name = input.value("name", "");
    std::optional<InputMode> mode = Parse<InputMode>(input.value("mode", ""));
    if (!mode) {
      return InvalidArgument("input \"" + name + "\" has the mode '" + input.value("mode", "") + "'; one of " +
                             NameList<InputMode>() + " was expected");
    }
    if (*mode == InputMode::kDownload) {
      std::string folder = LocalFolder(input);
      RETURN_IF_ERROR(Download(input, folder).WithContext("input \"" + name + "\""));
      env[InputVariable(name) + "_DIR"] = folder;
    } else if (*mode == InputMode::kPlaceholder) {
      std::string joined, lines;
      for (const Shard& shard : ShardsFromJson(input["shards"])) {
        joined += (joined.empty() ? "" : ",") + shard.uri;
        lines += shard.uri + "\n";
      }
      std::string list = task_dir_ + "/.shoal-input-" + name + ".txt";
      RETURN_IF_ERROR(MakeDirectories(task_dir_));
      RETURN_IF_ERROR(WriteFileAtomic(list, lines));
      env[InputVariable(name) + "_FILE"] = list;
      if (joined.size() <= kMaxListVariable) env[InputVariable(name)] = joined;
    } else {
      streams = true;
    }
  }
  for (const Json& output : outputs_) {
    std::string folder = LocalFolder(output);
    RETURN_IF_ERROR(MakeDirectories(folder));
    env[OutputFolderVariable(output.value("name", ""))] = folder;
  }
  if (streams) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return ResourceExhausted("cannot create the stdin pipe for stream inputs");
    ::fcntl(fds[1], F_SETPIPE_SZ, 1 << 20);  // fewer wake-ups; still bounded
    stdin_read_ = fds[0];
    stdin_write_ = fds[1];
  }
  return Status::Ok();
}

void TaskData::StartFeeding() {
  if (stdin_read_ >= 0) {
    ::close(stdin_read_);
    stdin_read_ = -1;
  }
  if (stdin_write_ < 0) return;
  feeder_ = std::thread([this] {
    // A program that stops reading must not kill the agent: on this thread only (the
    // programs keep the default), a closed pipe is an EPIPE error, not a signal.
    sigset_t pipe_signal;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
    for (const Json& input : inputs_) {
      if (Parse<InputMode>(input.value("mode", "")) != InputMode::kStream) continue;
      StreamOptions options;
      options.epochs = input.value("epochs", 1);
      options.shuffle = input.value("shuffle", false);
      options.seed = std::hash<std::string>()(task_name_ + "/" + input.value("name", ""));
      options.stop = &stop_;
      Status s = StreamShards(ShardsFromJson(input["shards"]), options, stdin_write_);
      if (!s.ok()) {
        LogError("input \"" + input.value("name", "") + "\": " + s.ToString());
        break;
      }
    }
    ::close(stdin_write_);  // end of input for the program
    stdin_write_ = -1;
  });
}

void TaskData::Finish() {
  stop_ = true;
  if (feeder_.joinable()) feeder_.join();
  if (stdin_write_ >= 0) {
    ::close(stdin_write_);
    stdin_write_ = -1;
  }
}

Status TaskData::CommitOutputs(bool succeeded, const std::atomic<bool>* cancel) {
  for (const Json& output : outputs_) {
    if (!Commits(output) || (!succeeded && !output.value("on_failure", false))) continue;
    std::string dest = output.value("root", "") + output.value("suffix", "");
    RETURN_IF_ERROR(CommitFolder(LocalFolder(output), dest, task_name_, {.cancel = cancel}));
  }
  return Status::Ok();
}

void TaskData::RequestSave(const std::string& name) {
  std::lock_guard lock(mu_);
  if (!save_started_.insert(name).second) return;
  savers_.emplace_back([this, name] {
    Status status;
    std::string uri;
    for (const Json& output : outputs_) {
      if (!Commits(output)) continue;
      std::string root = SavedModelRoot(output.value("root", ""), name);
      uri = root;
      // The program runs on: a file it is rewriting is copied again until it settles.
      status = CommitFolder(LocalFolder(output), root + output.value("suffix", ""), task_name_ + "-" + name,
                            {.settle = {.live = true}});
      if (!status.ok()) break;
    }
    std::lock_guard lock(mu_);
    save_reports_.push_back({name, status.ok() ? SaveState::kSaved : SaveState::kFailed, uri,
                             status.ok() ? "" : status.message()});
  });
}

std::vector<protocol::SavedModelUpdate> TaskData::SaveReports() {
  std::lock_guard lock(mu_);
  return save_reports_;
}

}  // namespace shoal::data
