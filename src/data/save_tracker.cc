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

Json SaveTracker::ForTask(const std::string& role, int index) const {
  Json names = Json::array();
  if (!Owes(role, index)) return names;
  for (const auto& [name, save] : saves_) {
    if (!save.failed_early && !save.reports.count({role, index})) names.push_back(name);
  }
  return names;
}

void SaveTracker::TaskReports(const std::string& role, int index, const Json& reports) {
  if (!reports.is_array() || !Owes(role, index)) return;
  for (const Json& r : reports) {
    auto it = saves_.find(r.value("name", ""));
    if (it != saves_.end()) it->second.reports[{role, index}] = r;
  }
}

void SaveTracker::TaskEnded(const std::string& role, int index) {
  for (auto& [name, save] : saves_) {
    if (Owes(role, index) && !save.reports.count({role, index})) {
      save.reports[{role, index}] = Json{{"state", "failed"},
                                         {"message", role + "[" + std::to_string(index) + "] ended before it saved"}};
    }
  }
}

Json SaveTracker::Updates() const {
  Json out = Json::array();
  for (const auto& [name, save] : saves_) {
    Json entry{{"name", name}, {"state", "uploading"}};
    if (save.failed_early) {
      entry["state"] = "failed";
      entry["message"] = save.message;
    } else if (save.reports.size() >= tasks_.size()) {
      entry["state"] = "saved";
      for (const auto& [task, report] : save.reports) {
        if (report.value("state", "") != "saved") {
          entry["state"] = "failed";
          entry["message"] = report.value("message", "");
          break;
        }
        if (report.contains("uri")) entry["uri"] = report["uri"];
      }
    }
    out.push_back(entry);
  }
  return out;
}

}  // namespace shoal::data
