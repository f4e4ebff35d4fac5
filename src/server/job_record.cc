#include "server/job_record.h"

#include <cstdlib>

namespace shoal {

std::string JobIdFor(int64_t seq) { return "job-" + std::to_string(seq); }

int64_t JobSeqFromId(const std::string& id) {
  std::string digits = id.starts_with("job-") ? id.substr(4) : id;
  if (digits.empty() || digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string::npos) return 0;
  return std::strtoll(digits.c_str(), nullptr, 10);
}

Json ToJson(const AttemptRecord& a) {
  Json tasks = Json::array();
  for (const auto& task : a.tasks) tasks.push_back(protocol::Encode(task));
  return Json{{"number", a.number},         {"state", Name(a.state)},   {"message", a.message},
              {"started_ms", a.started_ms}, {"finished_ms", a.finished_ms}, {"backend_id", a.backend_id},
              {"am_addr", a.am_addr},       {"dir", a.dir},             {"task_gpus", a.task_gpus},
              {"tasks", tasks},           {"final_reported", a.final_reported}, {"board_url", a.board_url},
              {"saved_models", a.saved_models}};
}

AttemptRecord AttemptFromJson(const Json& j) {
  AttemptRecord a;
  a.number = j.value("number", 1);
  a.state = Parse<AttemptState>(j.value("state", "")).value_or(AttemptState::kFailed);
  a.message = j.value("message", "");
  a.started_ms = j.value("started_ms", int64_t{0});
  a.finished_ms = j.value("finished_ms", int64_t{0});
  a.backend_id = j.value("backend_id", "");
  a.am_addr = j.value("am_addr", "");
  a.dir = j.value("dir", "");
  a.task_gpus = j.value("task_gpus", std::vector<std::vector<int>>{});
  const Json tasks = j.value("tasks", Json::array());
  for (size_t i = 0; i < tasks.size(); ++i) {
    // The history holds what this server wrote; a damaged entry is left out, not fatal.
    if (auto task = protocol::DecodeTaskView(tasks[i], "tasks[" + std::to_string(i) + "]"); task.ok()) {
      a.tasks.push_back(std::move(task).value());
    }
  }
  a.final_reported = j.value("final_reported", false);
  a.board_url = j.value("board_url", "");
  a.saved_models = j.value("saved_models", Json::array());
  return a;
}

Json JobRecord::Summary() const {
  return Json{{"id", id},
              {"name", spec.name},
              {"user", spec.user},
              {"framework", spec.framework},
              {"state", Name(state)},
              {"message", message},
              {"progress", progress},
              {"attempt", attempts.empty() ? 0 : attempts.back().number},
              {"max_attempts", spec.max_attempts},
              {"tasks", spec.TotalTasks()},
              {"created_ms", created_ms},
              {"started_ms", started_ms},
              {"finished_ms", finished_ms}};
}

Json JobRecord::Detail() const {
  Json detail = Summary();
  detail["spec"] = ToJson(spec);
  detail["version"] = version;
  Json attempts_json = Json::array();
  Json saved_models = Json::array();
  for (const auto& attempt : attempts) {
    attempts_json.push_back(ToJson(attempt));
    for (Json entry : attempt.saved_models) {
      entry["attempt"] = attempt.number;
      saved_models.push_back(std::move(entry));
    }
  }
  detail["attempts"] = attempts_json;
  detail["board_url"] = attempts.empty() ? "" : attempts.back().board_url;
  detail["saved_models"] = saved_models;
  return detail;
}

}  // namespace shoal
