#include "protocol/attempt_messages.h"

#include "protocol/field_reader.h"

namespace shoal::protocol {
namespace {

Result<std::string> CheckBoardUrl(const std::string& url) {
  if (url.empty()) return url;
  if (url.size() > 2048 || !(url.starts_with("http://") || url.starts_with("https://"))) {
    return InvalidArgument("report.board_url must be an http:// or https:// URL of at most 2048 characters");
  }
  return url;
}

Result<SaveRequest> DecodeSaveRequest(const Json& json, const std::string& path) {
  FieldReader r(json, path);
  SaveRequest m;
  m.name = r.RequiredString("name");
  m.requested_ms = r.Int64("requested_ms", 0, 0);
  if (!r.ok()) return r.status();
  return m;
}

Result<StackEntry> DecodeStackEntry(const Json& json, const std::string& path) {
  FieldReader r(json, path);
  StackEntry m;
  m.task = r.RequiredString("task");
  m.host = r.String("host");
  m.answered = r.Bool("answered", false);
  m.text = r.String("text");
  if (!r.ok()) return r.status();
  return m;
}

}  // namespace

std::string AttemptPath(const std::string& job_id, int attempt) {
  return "/internal/v1/jobs/" + job_id + "/attempts/" + std::to_string(attempt);
}

std::string ReportPath(const std::string& job_id, int attempt) { return AttemptPath(job_id, attempt) + "/report"; }

Json Encode(const TaskView& t) {
  return Json{{"role", t.role},
              {"index", t.index},
              {"rank", t.rank},
              {"state", Name(t.state)},
              {"container_id", t.container_id},
              {"host", t.host},
              {"ports", t.ports},
              {"gpus", t.gpus},
              {"pid", t.pid},
              {"progress", t.progress},
              {"exit_code", t.exit_code},
              {"signal", t.signal},
              {"message", t.message},
              {"started_ms", t.started_ms},
              {"finished_ms", t.finished_ms},
              {"service", t.service},
              {"cpu", t.cpu},
              {"rss", t.rss},
              {"rss_peak", t.rss_peak},
              {"heartbeat_rtt_ms", t.heartbeat_rtt_ms},
              {"hung", t.hung},
              {"hung_since_ms", t.hung_since_ms}};
}

Result<TaskView> DecodeTaskView(const Json& json, const std::string& path) {
  FieldReader r(json, path);
  TaskView t;
  t.role = r.RequiredString("role");
  t.index = r.RequiredInt("index", 0, 1 << 20);
  t.rank = r.Int("rank", 0, 0, 1 << 24);
  t.state = r.Enum("state", TaskState::kPending, Parse<TaskState>, NameList<TaskState>());
  t.container_id = r.String("container_id");
  t.host = r.String("host");
  t.ports = r.IntList("ports", 0, 65535);
  t.gpus = r.IntList("gpus", 0, 1 << 16);
  t.pid = r.Int("pid", 0);
  t.progress = r.Number("progress", 0, 0, 1);
  t.exit_code = r.Int("exit_code", -1);
  t.signal = r.Int("signal", 0, 0, 128);
  t.message = r.String("message");
  t.started_ms = r.Int64("started_ms", 0);
  t.finished_ms = r.Int64("finished_ms", 0);
  t.service = r.Bool("service", false);
  t.cpu = r.Number("cpu", 0, 0);
  t.rss = r.Int64("rss", 0, 0);
  t.rss_peak = r.Int64("rss_peak", 0, 0);
  t.heartbeat_rtt_ms = r.Number("heartbeat_rtt_ms", -1);
  t.hung = r.Bool("hung", false);
  t.hung_since_ms = r.Int64("hung_since_ms", 0);
  if (!r.ok()) return r.status();
  return t;
}

Json Encode(const AttemptFetchReply& m) { return Json{{"spec", ToJson(m.spec)}, {"task_gpus", m.task_gpus}}; }

std::vector<std::vector<int>> ReadTaskGpus(FieldReader& r) {
  std::vector<std::vector<int>> task_gpus;
  if (const Json* gpus = r.Array("task_gpus")) {
    for (size_t i = 0; i < gpus->size() && r.ok(); ++i) {
      Json wrapper{{"gpus", (*gpus)[i]}};
      FieldReader g(wrapper, r.PathOf("task_gpus[" + std::to_string(i) + "]"));
      task_gpus.push_back(g.IntList("gpus", 0, 1 << 16));
      r.Keep(g.status());
    }
  }
  return task_gpus;
}

const Json* RequireSpec(FieldReader& r) {
  const Json* spec = r.Object("spec");
  if (r.ok() && !spec) r.Fail("spec", "is missing (the job spec)");
  return spec;
}

Result<JobSpec> DecodeSpec(const Json& spec, const std::string& path) {
  try {
    return JobSpecFromJson(spec);
  } catch (const std::exception& e) {
    return InvalidArgument(path + ".spec is malformed: " + e.what());
  }
}

template <>
Result<AttemptFetchReply> Decode<AttemptFetchReply>(const Json& json) {
  FieldReader r(json, "attempt");
  AttemptFetchReply m;
  const Json* spec = RequireSpec(r);
  m.task_gpus = ReadTaskGpus(r);
  if (!r.ok()) return r.status();
  ASSIGN_OR_RETURN(m.spec, DecodeSpec(*spec, r.path()));
  return m;
}

Json Encode(const AttemptReport& m) {
  Json tasks = Json::array();
  for (const TaskView& t : m.tasks) tasks.push_back(Encode(t));
  Json series = Json::array();
  for (const TaskSeries& s : m.series) series.push_back(ToJson(s));
  Json saved = Json::array();
  for (const SavedModelUpdate& s : m.saved_models) saved.push_back(Encode(s));
  // Moved, not copied: an initializer list copies what it is given as an lvalue, and a
  // report of 10,000 tasks goes out every second.
  Json out{{"tasks", std::move(tasks)},
           {"final", m.final},
           {"version", m.version},
           {"series", std::move(series)},
           {"saved_models", std::move(saved)}};
  if (m.state) out["state"] = Name(*m.state);
  if (m.message) out["message"] = *m.message;
  if (m.am_addr) out["am_addr"] = *m.am_addr;
  if (m.board_url) out["board_url"] = *m.board_url;
  return out;
}

template <>
Result<AttemptReport> Decode<AttemptReport>(const Json& json) {
  FieldReader r(json, "report");
  AttemptReport m;
  if (r.ok() && !r.Has("tasks")) r.Fail("tasks", "is missing (an array)");
  m.tasks = r.List<TaskView>("tasks", DecodeTaskView);
  if (r.Has("state")) m.state = r.Enum("state", AttemptState::kStarting, Parse<AttemptState>, NameList<AttemptState>());
  if (r.Has("message")) m.message = r.String("message");
  if (r.Has("am_addr")) m.am_addr = r.String("am_addr");
  m.final = r.Bool("final", false);
  m.version = r.Int64("version", 0);
  if (!r.ok()) return r.status();
  if (const Json* series = r.Raw("series")) {
    ASSIGN_OR_RETURN(m.series, ParseSeries(*series));
  }
  if (const Json* board = r.Raw("board_url")) {
    if (!board->is_null() && !board->is_string()) return InvalidArgument("report.board_url must be a string URL");
    ASSIGN_OR_RETURN(std::string url, CheckBoardUrl(board->is_null() ? "" : board->get<std::string>()));
    m.board_url = url;
  }
  m.saved_models = r.List<SavedModelUpdate>("saved_models", DecodeSavedModelUpdate);
  if (!r.ok()) return r.status();
  return m;
}

Json Encode(const SaveRequest& m) { return Json{{"name", m.name}, {"requested_ms", m.requested_ms}}; }

Json Encode(const ReportReply& m) {
  Json requests = Json::array();
  for (const SaveRequest& s : m.save_requests) requests.push_back(Encode(s));
  Json out{{"save_requests", std::move(requests)}, {"series_stored", m.series_stored}};
  if (m.preempt) out["preempt"] = Encode(*m.preempt);
  return out;
}

template <>
Result<ReportReply> Decode<ReportReply>(const Json& json) {
  FieldReader r(json, "report reply");
  ReportReply m;
  m.save_requests = r.List<SaveRequest>("save_requests", DecodeSaveRequest);
  m.series_stored = r.Bool("series_stored", true);
  m.preempt = ReadPreemptNotice(r);
  if (!r.ok()) return r.status();
  return m;
}

Json Encode(const StackEntry& m) {
  return Json{{"task", m.task}, {"host", m.host}, {"answered", m.answered}, {"text", m.text}};
}

Json Encode(const StackReply& m) {
  Json tasks = Json::array();
  for (const StackEntry& e : m.tasks) tasks.push_back(Encode(e));
  return Json{{"tasks", std::move(tasks)}};
}

template <>
Result<StackReply> Decode<StackReply>(const Json& json) {
  FieldReader r(json, "stack reply");
  StackReply m;
  m.tasks = r.List<StackEntry>("tasks", DecodeStackEntry);
  if (!r.ok()) return r.status();
  return m;
}

}  // namespace shoal::protocol
