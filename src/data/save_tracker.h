// SaveTracker: the AM's side of Save Model. The server's report reply names the save
// requests; the AM passes each to the tasks that commit outputs (in heartbeat replies),
// collects their reports, and tells the server how each save went.
//
// Contract:
//  - Request(names) starts tracking new names (others are ignored); a job with no output
//    tasks fails the save at once ("the job has no outputs").
//  - ForTask(role, index) lists the names that task has not reported yet.
//  - TaskReports(role, index, reports) records a task's reports (protocol/task_messages.h).
//  - Updates() is the report's saved_models: every tracked name with state "uploading"
//    until every output task reported, then "saved" (uri: the saved folder) or "failed"
//    (the first task's message).
//  - TaskEnded(role, index): a task that ended without reporting fails the saves it owed.
// Thread-safety: none; the AM calls it under its mutex.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "protocol/task_messages.h"

namespace shoal::data {

class SaveTracker {
 public:
  explicit SaveTracker(std::vector<std::pair<std::string, int>> output_tasks)
      : tasks_(std::move(output_tasks)) {}

  void Request(const std::vector<std::string>& names);
  std::vector<std::string> ForTask(const std::string& role, int index) const;
  void TaskReports(const std::string& role, int index, const std::vector<protocol::SavedModelUpdate>& reports);
  void TaskEnded(const std::string& role, int index);
  std::vector<protocol::SavedModelUpdate> Updates() const;

 private:
  struct Save {
    std::map<std::pair<std::string, int>, protocol::SavedModelUpdate> reports;  // per task
    bool failed_early = false;
    std::string message;
  };
  bool Owes(const std::string& role, int index) const;  // an output task?

  std::vector<std::pair<std::string, int>> tasks_;
  std::map<std::string, Save> saves_;
};

}  // namespace shoal::data
