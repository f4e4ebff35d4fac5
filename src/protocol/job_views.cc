#include "protocol/job_views.h"

#include "protocol/field_reader.h"
#include "spec/spec_document.h"

namespace shoal::protocol {
namespace {

// The summary's fields, which a job's detail carries too, at the same level.
void EncodeSummaryInto(const JobSummary& v, Json& out) {
  out["id"] = v.id;
  out["name"] = v.name;
  out["user"] = v.user;
  out["framework"] = v.framework;
  out["state"] = Name(v.state);
  out["message"] = v.message;
  out["progress"] = v.progress;
  out["attempt"] = v.attempt;
  out["max_attempts"] = v.max_attempts;
  out["tasks"] = v.tasks;
  out["created_ms"] = v.created_ms;
  out["started_ms"] = v.started_ms;
  out["finished_ms"] = v.finished_ms;
  out["queue"] = v.queue;
  out["priority"] = v.priority;
  out["wait_reason"] = v.wait_reason;
  out["expected_start_ms"] = v.expected_start_ms;
}

JobSummary ReadSummary(FieldReader& r) {
  JobSummary v;
  v.id = r.RequiredString("id");
  v.name = r.String("name");
  v.user = r.String("user");
  v.framework = r.String("framework");
  v.state = r.Enum("state", JobState::kQueued, Parse<JobState>, NameList<JobState>());
  v.message = r.String("message");
  v.progress = r.Number("progress", 0, 0, 1);
  v.attempt = r.Int("attempt", 0, 0);
  v.max_attempts = r.Int("max_attempts", 1, 0);
  v.tasks = r.Int("tasks", 0, 0);
  v.created_ms = r.Int64("created_ms", 0);
  v.started_ms = r.Int64("started_ms", 0);
  v.finished_ms = r.Int64("finished_ms", 0);
  v.queue = r.String("queue");
  if (v.queue.empty()) v.queue = "default";
  v.priority = r.Int("priority", 0, -1000000);
  v.wait_reason = r.String("wait_reason");
  v.expected_start_ms = r.Int64("expected_start_ms", 0);
  return v;
}

Result<JobSummary> DecodeJobSummary(const Json& json, const std::string& path) {
  FieldReader r(json, path);
  JobSummary v = ReadSummary(r);
  if (!r.ok()) return r.status();
  return v;
}

template <typename T>
Json EncodeAll(const std::vector<T>& items) {
  Json out = Json::array();
  for (const T& item : items) out.push_back(Encode(item));
  return out;
}

// A job's spec as the API shows it and the history stores it: the spec document, or the
// internal form job histories of earlier versions hold.
Result<JobSpec> DecodeSpecDocument(const Json& spec, const std::string& path) {
  if (IsInternalSpecJson(spec)) return DecodeSpec(spec, path);
  try {
    return JobSpecFromDocument(spec);
  } catch (const std::exception& e) {
    return InvalidArgument(path + ".spec is malformed: " + e.what());
  }
}

}  // namespace

Json Encode(const SavedModelView& v) {
  Json out{{"name", v.name}, {"requested_ms", v.requested_ms}, {"state", Name(v.state)}};
  if (!v.uri.empty()) out["uri"] = v.uri;
  if (!v.targets.empty()) out["targets"] = v.targets;
  if (!v.message.empty()) out["message"] = v.message;
  if (v.updated_ms > 0) out["updated_ms"] = v.updated_ms;
  if (v.attempt > 0) out["attempt"] = v.attempt;
  return out;
}

Result<SavedModelView> DecodeSavedModelView(const Json& json, const std::string& path) {
  FieldReader r(json, path);
  SavedModelView v;
  v.name = r.RequiredString("name");
  v.requested_ms = r.Int64("requested_ms", 0);
  v.state = r.Enum("state", SaveState::kRequested, Parse<SaveState>, NameList<SaveState>());
  v.uri = r.String("uri");
  v.targets = r.StringList("targets");
  v.message = r.String("message");
  v.updated_ms = r.Int64("updated_ms", 0);
  v.attempt = r.Int("attempt", 0, 0);
  if (!r.ok()) return r.status();
  return v;
}

Json Encode(const AttemptView& v) {
  return Json{{"number", v.number},
              {"state", Name(v.state)},
              {"message", v.message},
              {"started_ms", v.started_ms},
              {"finished_ms", v.finished_ms},
              {"backend_id", v.backend_id},
              {"am_addr", v.am_addr},
              {"dir", v.dir},
              {"task_gpus", v.task_gpus},
              {"tasks", EncodeAll(v.tasks)},
              {"final_reported", v.final_reported},
              {"board_url", v.board_url},
              {"saved_models", EncodeAll(v.saved_models)}};
}

Result<AttemptView> DecodeAttemptView(const Json& json, const std::string& path) {
  FieldReader r(json, path);
  AttemptView v;
  v.number = r.Int("number", 1, 1);
  v.state = r.Enum("state", AttemptState::kStarting, Parse<AttemptState>, NameList<AttemptState>());
  v.message = r.String("message");
  v.started_ms = r.Int64("started_ms", 0);
  v.finished_ms = r.Int64("finished_ms", 0);
  v.backend_id = r.String("backend_id");
  v.am_addr = r.String("am_addr");
  v.dir = r.String("dir");
  v.task_gpus = ReadTaskGpus(r);
  v.tasks = r.List<TaskView>("tasks", DecodeTaskView);
  v.final_reported = r.Bool("final_reported", false);
  v.board_url = r.String("board_url");
  v.saved_models = r.List<SavedModelView>("saved_models", DecodeSavedModelView);
  if (!r.ok()) return r.status();
  return v;
}

Json Encode(const JobSummary& v) {
  Json out = Json::object();
  EncodeSummaryInto(v, out);
  return out;
}

template <>
Result<JobSummary> Decode<JobSummary>(const Json& json) {
  return DecodeJobSummary(json, "job");
}

Json Encode(const JobDetail& v) {
  Json out = Json::object();
  EncodeSummaryInto(v.summary, out);
  out["spec"] = SpecDocument(v.spec);
  out["version"] = v.version;
  out["attempts"] = EncodeAll(v.attempts);
  out["board_url"] = v.board_url;
  out["saved_models"] = EncodeAll(v.saved_models);
  if (!v.limits_not_enforced.empty()) out["limits_not_enforced"] = v.limits_not_enforced;
  return out;
}

template <>
Result<JobDetail> Decode<JobDetail>(const Json& json) {
  FieldReader r(json, "job");
  JobDetail v;
  v.summary = ReadSummary(r);
  const Json* spec = RequireSpec(r);
  v.version = r.Int64("version", 0, 0);
  v.attempts = r.List<AttemptView>("attempts", DecodeAttemptView);
  v.board_url = r.String("board_url");
  v.saved_models = r.List<SavedModelView>("saved_models", DecodeSavedModelView);
  v.limits_not_enforced = r.String("limits_not_enforced");
  if (!r.ok()) return r.status();
  ASSIGN_OR_RETURN(v.spec, DecodeSpecDocument(*spec, r.path()));
  if (v.spec.user.empty()) v.spec.user = v.summary.user;
  return v;
}

Json Encode(const JobList& v) {
  return Json{{"jobs", EncodeAll(v.jobs)}, {"total", v.total}, {"limit", v.limit}, {"offset", v.offset}};
}

template <>
Result<JobList> Decode<JobList>(const Json& json) {
  FieldReader r(json, "list");
  JobList v;
  v.jobs = r.List<JobSummary>("jobs", DecodeJobSummary);
  v.total = r.Int64("total", 0, 0);
  v.limit = r.Int("limit", 0, 0);
  v.offset = r.Int64("offset", 0, 0);
  if (!r.ok()) return r.status();
  return v;
}

}  // namespace shoal::protocol
