#include "data/save_tracker.h"

#include <algorithm>

namespace shoal::data {

void SaveTracker::Request(const std::vector<std::string>& names) {
  for (const auto& name : names) {
    if (saves_.count(name)) continue;
    Save& save = saves_[name];
    if (tasks_.empty()) {
      save.failed_early = true;
      save.message = "the job has no outputs: add outputs to its spec to save models";
    }
  }
}

bool SaveTracker::Owes(const std::string& role, int index) const {
  return std::find(tasks_.begin(), tasks_.end(), std::make_pair(role, index)) != tasks_.end();
}

std::vector<std::string> SaveTracker::ForTask(const std::string& role, int index) const {
  std::vector<std::string> names;
  if (!Owes(role, index)) return names;
  for (const auto& [name, save] : saves_) {
    if (!save.failed_early && !save.reports.count({role, index})) names.push_back(name);
  }
  return names;
}

void SaveTracker::TaskReports(const std::string& role, int index, const std::vector<protocol::SavedModelUpdate>& reports) {
  if (!Owes(role, index)) return;
  for (const auto& r : reports) {
    auto it = saves_.find(r.name);
    if (it != saves_.end()) it->second.reports[{role, index}] = r;
  }
}

void SaveTracker::TaskEnded(const std::string& role, int index) {
  for (auto& [name, save] : saves_) {
    if (Owes(role, index) && !save.reports.count({role, index})) {
      save.reports[{role, index}] = protocol::SavedModelUpdate{
          name, SaveState::kFailed, "", role + "[" + std::to_string(index) + "] ended before it saved"};
    }
  }
}

std::vector<protocol::SavedModelUpdate> SaveTracker::Updates() const {
  std::vector<protocol::SavedModelUpdate> out;
  for (const auto& [name, save] : saves_) {
    protocol::SavedModelUpdate entry{name, SaveState::kUploading, "", ""};
    if (save.failed_early) {
      entry.state = SaveState::kFailed;
      entry.message = save.message;
    } else if (save.reports.size() >= tasks_.size()) {
      entry.state = SaveState::kSaved;
      for (const auto& [task, report] : save.reports) {
        if (report.state != SaveState::kSaved) {
          entry.state = SaveState::kFailed;
          entry.message = report.message;
          entry.uri.clear();
          break;
        }
        if (!report.uri.empty()) entry.uri = report.uri;
      }
    }
    out.push_back(entry);
  }
  return out;
}

}  // namespace shoal::data
