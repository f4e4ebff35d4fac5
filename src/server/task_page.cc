#include "server/task_page.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "protocol/states.h"

namespace shoal {
namespace {

constexpr const char* kStateNames = "PENDING, LAUNCHING, REGISTERED, RUNNING, HUNG, SUCCEEDED, FAILED, KILLED or LOST";

std::string ShownState(const protocol::TaskView& task) {
  return task.state == TaskState::kRunning && task.hung ? "HUNG" : Name(task.state);
}

}  // namespace

Result<std::vector<std::string>> ParseTaskStates(const std::string& text) {
  std::vector<std::string> states;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = std::min(text.find(',', start), text.size());
    std::string state = text.substr(start, comma - start);
    std::transform(state.begin(), state.end(), state.begin(), [](unsigned char c) { return std::toupper(c); });
    if (!state.empty()) {
      if (state != "HUNG" && !Parse<TaskState>(state)) {
        return InvalidArgument("task_state '" + state.substr(0, 40) + "' is not a task state; use " + kStateNames +
                               " (several separated by commas)");
      }
      states.push_back(state);
    }
    start = comma + 1;
  }
  return states;
}

Json PageTasks(protocol::JobDetail& detail, const TaskPageQuery& query) {
  Json summary = Json::array();
  Json page{{"offset", query.offset}, {"limit", query.limit}, {"matched", 0}, {"total", 0}};
  if (!detail.attempts.empty()) {
    for (size_t i = 0; i + 1 < detail.attempts.size(); ++i) detail.attempts[i].tasks.clear();
    std::vector<protocol::TaskView> all = std::move(detail.attempts.back().tasks);
    std::vector<protocol::TaskView> kept;
    std::vector<std::pair<std::string, std::map<std::string, int64_t>>> roles;  // in the order of their first task
    int64_t matched = 0;
    for (protocol::TaskView& task : all) {
      std::string state = ShownState(task);
      auto counts = std::find_if(roles.begin(), roles.end(), [&](const auto& r) { return r.first == task.role; });
      if (counts == roles.end()) counts = roles.insert(roles.end(), {task.role, {}});
      counts->second[state]++;
      bool wanted = (query.role.empty() || task.role == query.role) &&
                    (query.states.empty() || std::find(query.states.begin(), query.states.end(), state) != query.states.end());
      if (!wanted) continue;
      if (matched >= query.offset && matched - query.offset < query.limit) kept.push_back(std::move(task));
      ++matched;
    }
    page["matched"] = matched;
    page["total"] = all.size();
    detail.attempts.back().tasks = std::move(kept);
    for (const auto& [role, counts] : roles) {
      std::vector<std::pair<std::string, int64_t>> states(counts.begin(), counts.end());
      std::stable_sort(states.begin(), states.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
      Json listed = Json::array();
      int64_t tasks = 0;
      for (const auto& [state, count] : states) {
        listed.push_back({{"state", state}, {"count", count}});
        tasks += count;
      }
      summary.push_back({{"role", role}, {"tasks", tasks}, {"states", std::move(listed)}});
    }
  }
  return Json{{"task_page", std::move(page)}, {"task_summary", std::move(summary)}};
}

}  // namespace shoal
