// TaskData: a container's side of data management (docs/data.md). Before the program
// starts it downloads the task's share of download-mode inputs, describes placeholder
// inputs in variables, and opens the stdin pipe for stream inputs; while it runs it feeds
// that pipe and saves models on request; after it ends it commits the outputs.
//
// Contract:
//  - Prepare: download inputs go to <task dir>/<path>/<name relative to the input's base>,
//    fetched in parallel (SHOAL_INPUT_<NAME>_DIR names the folder, which is the task
//    owner's alone, 0700; files from a file system keep their permission bits); placeholder inputs
//    set SHOAL_INPUT_<NAME> (the URIs, comma-separated; left out when over 32 KiB) and
//    SHOAL_INPUT_<NAME>_FILE (a file with one URI a line). SHOAL_OUTPUT_<NAME>_DIR names
//    each output's local folder (created), also in a task that does not commit that
//    output (`commit: false`: `from` picks another task, or a service role): there it is
//    scratch space, never uploaded. The first failure is returned, naming the object; a
//    full disk is kResourceExhausted.
//  - With stream inputs, stdin_fd() is the pipe's read end for the program (else -1);
//    StartFeeding() after the program started closes it here and feeds every stream
//    input, one after the other, on a thread of its own; Finish() stops and joins it.
//  - CommitOutputs(succeeded) commits every output the task commits (data/output_commit.h)
//    when the task succeeded, or when it failed and the output says on_failure.
//  - RequestSave(name) commits those outputs' current contents to
//    <root>/saved-<name><suffix> on a thread of its own (once per name), copying again a
//    file the program rewrites meanwhile (data/settled_upload.h); SaveReports() lists
//    the finished ones (state saved or failed).
//  - has_outputs(): whether the task commits any output.
// Thread-safety: RequestSave and SaveReports from any thread; the rest from one.
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/json.h"
#include "common/status.h"
#include "protocol/task_messages.h"

namespace shoal::data {

class TaskData {
 public:
  TaskData(Json inputs, Json outputs, std::string task_dir, std::string task_name);
  ~TaskData();

  Status Prepare(std::map<std::string, std::string>& env);
  int stdin_fd() const { return stdin_read_; }
  void StartFeeding();
  void Finish();
  // cancel: set when the task is being stopped; the commit then ends without _SUCCESS.
  Status CommitOutputs(bool succeeded, const std::atomic<bool>* cancel = nullptr);
  void RequestSave(const std::string& name);
  std::vector<protocol::SavedModelUpdate> SaveReports();
  bool has_outputs() const;

 private:
  static bool Commits(const Json& output);
  std::string LocalFolder(const Json& entry) const;

  Json inputs_;
  Json outputs_;
  std::string task_dir_;
  std::string task_name_;
  int stdin_read_ = -1;
  int stdin_write_ = -1;
  std::thread feeder_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::set<std::string> save_started_;  // GUARDED_BY(mu_)
  std::vector<protocol::SavedModelUpdate> save_reports_;  // GUARDED_BY(mu_)
  std::vector<std::thread> savers_;     // GUARDED_BY(mu_)
};

}  // namespace shoal::data
