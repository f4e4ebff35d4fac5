#include "protocol/task_messages.h"

#include <cstdlib>

#include "common/http_client.h"
#include "protocol/field_reader.h"

namespace shoal::protocol {
namespace {

constexpr int64_t kMaxIndex = 1 << 20;
constexpr int64_t kMaxPort = 65535;

Json EncodeEnv(const EnvMap& env) {
  Json out = Json::object();
  for (const auto& [k, v] : env) out[k] = v;
  return out;
}

// The task a message names: "role" (a non-empty string) and "index" (an integer >= 0).
TaskId ReadTask(FieldReader& r) {
  TaskId task;
  task.role = r.RequiredString("role");
  task.index = r.RequiredInt("index", 0, kMaxIndex);
  if (r.ok() && task.role.empty()) r.Fail("role", "must name the task's role");
  return task;
}

void WriteTask(Json& out, const TaskId& task) {
  out["role"] = task.role;
  out["index"] = task.index;
}

// Wraps a decoder body so that nothing it reads can throw past it.
template <typename T, typename F>
Result<T> Guarded(const char* path, F body) {
  try {
    return body();
  } catch (const std::exception& e) {
    return InvalidArgument(std::string(path) + " is malformed: " + e.what());
  }
}

Result<ArchiveSpec> DecodeArchive(const Json& json, const std::string& path) {
  FieldReader r(json, path);
  ArchiveSpec archive;
  archive.path = r.RequiredString("path");
  archive.name = r.RequiredString("name");
  if (const Json* prepend = r.Object("prepend")) {
    for (const auto& [var, list] : prepend->items()) {
      FieldReader lists(*prepend, r.PathOf("prepend"));
      archive.prepend[var] = lists.StringList(var.c_str());
      if (!lists.ok()) return lists.status();
    }
  }
  if (!r.ok()) return r.status();
  return archive;
}

Json EncodeArchive(const ArchiveSpec& a) { return Json{{"path", a.path}, {"name", a.name}, {"prepend", a.prepend}}; }

}  // namespace

Json Encode(const TaskId& m) { return Json{{"role", m.role}, {"index", m.index}}; }

Result<TaskId> DecodeTaskId(const Json& json, const std::string& path) {
  FieldReader r(json, path);
  TaskId task = ReadTask(r);
  if (!r.ok()) return r.status();
  return task;
}

template <>
Result<TaskId> Decode<TaskId>(const Json& json) {
  return DecodeTaskId(json, "the message");
}

Json Encode(const SavedModelUpdate& m) {
  return Json{{"name", m.name}, {"state", Name(m.state)}, {"uri", m.uri}, {"message", m.message}};
}

Result<SavedModelUpdate> DecodeSavedModelUpdate(const Json& json, const std::string& path) {
  FieldReader r(json, path);
  SavedModelUpdate m;
  m.name = r.RequiredString("name");
  if (r.ok() && m.name.empty()) r.Fail("name", "must name the save request");
  if (r.ok() && !r.Has("state")) r.Fail("state", "is missing");
  m.state = r.Enum("state", SaveState::kRequested, Parse<SaveState>, NameList<SaveState>());
  m.uri = r.String("uri");
  m.message = r.String("message");
  if (!r.ok()) return r.status();
  return m;
}

template <>
Result<SavedModelUpdate> Decode<SavedModelUpdate>(const Json& json) {
  return DecodeSavedModelUpdate(json, "saved_model");
}

Json Encode(const RegisterRequest& m) {
  Json out{{"host", m.host}, {"ports", m.ports}, {"pid", m.pid}};
  WriteTask(out, m.task);
  if (m.gpus) out["gpus"] = *m.gpus;
  return out;
}

template <>
Result<RegisterRequest> Decode<RegisterRequest>(const Json& json) {
  return Guarded<RegisterRequest>("register", [&]() -> Result<RegisterRequest> {
    FieldReader r(json, "register");
    RegisterRequest m;
    m.task = ReadTask(r);
    m.host = r.String("host", m.host);
    m.ports = r.IntList("ports", 1, kMaxPort);
    m.gpus = r.OptionalIntList("gpus", 0, 1 << 16);
    m.pid = r.Int("pid", 0, 0);
    if (r.ok() && m.ports.empty()) r.Fail("ports", "must list at least one port the task reserved");
    if (!r.ok()) return r.status();
    return m;
  });
}

std::string EncodeQuery(const WaitQuery& q) {
  return "?role=" + UrlEncode(q.task.role) + "&index=" + std::to_string(q.task.index) +
         "&wait_ms=" + std::to_string(q.wait_ms);
}

Result<WaitQuery> DecodeWaitQuery(const std::string& role, const std::string& index, const std::string& wait_ms) {
  auto whole = [](const std::string& text, int64_t lo, int64_t hi) -> std::optional<int> {
    if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    int64_t v = std::strtoll(text.c_str(), nullptr, 10);
    if (v < lo || v > hi) return std::nullopt;
    return static_cast<int>(v);
  };
  WaitQuery q;
  if (role.empty()) return InvalidArgument("the query's role must name the task's role");
  q.task.role = role;
  auto i = whole(index, 0, kMaxIndex);
  if (!i) return InvalidArgument("the query's index must be a whole number from 0 to " + std::to_string(kMaxIndex));
  q.task.index = *i;
  if (!wait_ms.empty()) {
    auto w = whole(wait_ms, 0, 30'000);
    if (!w) return InvalidArgument("the query's wait_ms must be a whole number from 0 to 30000");
    q.wait_ms = *w;
  }
  return q;
}

Json Encode(const LaunchPlan& m) {
  Json processes = Json::array();
  for (const EnvMap& env : m.processes) processes.push_back(EncodeEnv(env));
  Json archives = Json::array();
  for (const ArchiveSpec& a : m.archives) archives.push_back(EncodeArchive(a));
  Json out{{"command", m.command}, {"workdir", m.workdir},     {"env", EncodeEnv(m.env)},
           {"processes", processes}, {"heartbeat_ms", m.heartbeat_ms}, {"mpi", m.mpi},
           {"files", m.files},     {"archives", archives},     {"inputs", m.inputs},
           {"outputs", m.outputs}, {"mask", m.mask}};
  if (m.board_command) out["board_command"] = *m.board_command;
  if (m.checkpoint) out["checkpoint"] = ToJson(*m.checkpoint);
  if (m.resume_round > 0) out["resume_round"] = m.resume_round;
  out["preemption_grace_ms"] = m.preemption_grace_ms;
  if (m.image) out["image"] = ToJson(*m.image);
  return out;
}

template <>
Result<LaunchPlan> Decode<LaunchPlan>(const Json& json) {
  return Guarded<LaunchPlan>("launch plan", [&]() -> Result<LaunchPlan> {
    FieldReader r(json, "launch plan");
    LaunchPlan m;
    m.command = r.RequiredString("command");
    m.workdir = r.String("workdir");
    m.env = r.StringMap("env");
    if (const Json* processes = r.Array("processes")) {
      m.processes.clear();
      for (size_t i = 0; i < processes->size() && r.ok(); ++i) {
        Json wrapper{{"env", (*processes)[i]}};
        FieldReader p(wrapper, r.PathOf("processes[" + std::to_string(i) + "]"));
        m.processes.push_back(p.StringMap("env"));
        if (!p.ok()) return p.status();
      }
      if (m.processes.empty()) r.Fail("processes", "must list at least one process");
    }
    m.heartbeat_ms = r.Int("heartbeat_ms", m.heartbeat_ms, 1, 3'600'000);
    if (r.Has("board_command")) m.board_command = r.String("board_command");
    m.mpi = r.Bool("mpi", false);
    m.files = r.StringList("files");
    m.archives = r.List<ArchiveSpec>("archives", DecodeArchive);
    if (const Json* inputs = r.Array("inputs")) m.inputs = *inputs;
    if (const Json* outputs = r.Array("outputs")) m.outputs = *outputs;
    m.mask = r.StringList("mask");
    if (const Json* checkpoint = r.Object("checkpoint")) {
      FieldReader c(*checkpoint, r.PathOf("checkpoint"));
      m.checkpoint = CheckpointSpec{c.RequiredString("path"), c.RequiredString("uri"), c.Int("keep", 3, 1, 1000)};
      r.Keep(c.status());
    }
    m.resume_round = r.Int("resume_round", 0, 0, std::numeric_limits<int>::max());
    m.preemption_grace_ms = r.Int64("preemption_grace_ms", m.preemption_grace_ms, 0, 86'400'000);
    if (const Json* image = r.Object("image")) {
      FieldReader i(*image, r.PathOf("image"));
      m.image = ImageSpec{i.RequiredString("name"), i.String("id"), i.RequiredString("rootfs")};
      if (i.ok() && !m.image->rootfs.starts_with("/")) i.Fail("rootfs", "must be an absolute path");
      r.Keep(i.status());
    }
    if (!r.ok()) return r.status();
    return m;
  });
}

Json Encode(const ClusterReply& m) {
  if (!m.ready) return Json{{"ready", false}};
  Json out = Encode(m.plan);
  out["ready"] = true;
  return out;
}

template <>
Result<ClusterReply> Decode<ClusterReply>(const Json& json) {
  FieldReader r(json, "cluster reply");
  ClusterReply m;
  m.ready = r.Bool("ready", false);
  if (!r.ok()) return r.status();
  if (!m.ready) return m;
  ASSIGN_OR_RETURN(m.plan, Decode<LaunchPlan>(json));
  return m;
}

Json Encode(const StartedRequest& m) {
  Json out{{"pid", m.pid}};
  WriteTask(out, m.task);
  if (!m.board_url.empty()) out["board_url"] = m.board_url;
  return out;
}

template <>
Result<StartedRequest> Decode<StartedRequest>(const Json& json) {
  FieldReader r(json, "started");
  StartedRequest m;
  m.task = ReadTask(r);
  m.pid = r.Int("pid", 0, 0);
  m.board_url = r.String("board_url");
  if (!r.ok()) return r.status();
  return m;
}

Json Encode(const HeartbeatRequest& m) {
  Json metrics = Json::array();
  for (const MetricPoint& p : m.metrics) metrics.push_back(ToJson(p));
  Json saved = Json::array();
  for (const SavedModelUpdate& s : m.saved_models) saved.push_back(Encode(s));
  Json out{{"progress", m.progress}, {"metrics", std::move(metrics)}, {"saved_models", std::move(saved)}};
  WriteTask(out, m.task);
  if (m.sample) out["sample"] = ToJson(*m.sample);
  if (m.rtt_ms >= 0) out["rtt_ms"] = m.rtt_ms;
  if (m.uploading) out["uploading"] = true;
  return out;
}

template <>
Result<HeartbeatRequest> Decode<HeartbeatRequest>(const Json& json) {
  return Guarded<HeartbeatRequest>("heartbeat", [&]() -> Result<HeartbeatRequest> {
    FieldReader r(json, "heartbeat");
    HeartbeatRequest m;
    m.task = ReadTask(r);
    m.progress = r.Number("progress", -1);
    if (r.Has("sample") && r.ok()) {
      ASSIGN_OR_RETURN(ResourceSample sample, DecodeSample(*r.Raw("sample"), r.PathOf("sample")));
      m.sample = sample;
    }
    m.metrics = r.List<MetricPoint>("metrics", DecodeMetricPoint);
    m.rtt_ms = r.Number("rtt_ms", -1);
    m.uploading = r.Bool("uploading", false);
    m.saved_models = r.List<SavedModelUpdate>("saved_models", DecodeSavedModelUpdate);
    if (!r.ok()) return r.status();
    return m;
  });
}

Json Encode(const PreemptNotice& m) { return Json{{"reason", m.reason}, {"grace_ms", m.grace_ms}}; }

std::optional<PreemptNotice> ReadPreemptNotice(FieldReader& r) {
  const Json* object = r.Object("preempt");
  if (!object) return std::nullopt;
  FieldReader notice(*object, r.PathOf("preempt"));
  PreemptNotice m{notice.String("reason"), notice.Int64("grace_ms", 0, 0, 86'400'000)};
  if (!notice.ok()) {
    r.Keep(notice.status());
    return std::nullopt;
  }
  return m;
}

Json Encode(const HeartbeatReply& m) {
  Json out{{"keep_running", m.keep_running}};
  if (m.preempt) out["preempt"] = Encode(*m.preempt);
  if (m.dump_stacks) out["dump_stacks"] = *m.dump_stacks;
  if (!m.save_models.empty()) out["save_models"] = m.save_models;
  return out;
}

template <>
Result<HeartbeatReply> Decode<HeartbeatReply>(const Json& json) {
  FieldReader r(json, "heartbeat reply");
  HeartbeatReply m;
  m.keep_running = r.Bool("keep_running", true);
  m.dump_stacks = r.OptionalInt64("dump_stacks");
  m.save_models = r.StringList("save_models");
  m.preempt = ReadPreemptNotice(r);
  if (!r.ok()) return r.status();
  return m;
}

Json Encode(const StacksAnswer& m) {
  Json out{{"id", m.id}, {"text", m.text}};
  WriteTask(out, m.task);
  return out;
}

template <>
Result<StacksAnswer> Decode<StacksAnswer>(const Json& json) {
  FieldReader r(json, "stacks");
  StacksAnswer m;
  m.task = ReadTask(r);
  m.id = r.Int64("id", 0);
  m.text = r.String("text");
  if (!r.ok()) return r.status();
  return m;
}

Json Encode(const ExitRequest& m) {
  Json out{{"exit_code", m.exit.exit_code}, {"signal", m.exit.signal}, {"message", m.message}};
  if (m.terminated) out["terminated"] = true;
  WriteTask(out, m.task);
  return out;
}

template <>
Result<ExitRequest> Decode<ExitRequest>(const Json& json) {
  FieldReader r(json, "exited");
  ExitRequest m;
  m.task = ReadTask(r);
  m.exit.exit_code = r.Int("exit_code", 255);
  m.exit.signal = r.Int("signal", 0, 0, 128);
  m.message = r.String("message");
  m.terminated = r.Bool("terminated", false);
  if (!r.ok()) return r.status();
  return m;
}

Json Encode(const MpiCommandReply& m) {
  if (!m.ready) return Json{{"ready", false}};
  return Json{{"ready", true}, {"command", m.command}};
}

template <>
Result<MpiCommandReply> Decode<MpiCommandReply>(const Json& json) {
  FieldReader r(json, "mpi command reply");
  MpiCommandReply m;
  m.ready = r.Bool("ready", false);
  if (m.ready) m.command = r.RequiredString("command");
  if (!r.ok()) return r.status();
  return m;
}

Json Encode(const MpiLaunchRequest& m) { return Json{{"host", m.host}, {"command", m.command}}; }

template <>
Result<MpiLaunchRequest> Decode<MpiLaunchRequest>(const Json& json) {
  FieldReader r(json, "mpi launch");
  MpiLaunchRequest m;
  m.host = r.RequiredString("host");
  m.command = r.RequiredString("command");
  if (!r.ok()) return r.status();
  return m;
}

Json Encode(const MpiWaitReply& m) { return Json{{"done", m.done}, {"exit_code", m.exit_code}}; }

template <>
Result<MpiWaitReply> Decode<MpiWaitReply>(const Json& json) {
  FieldReader r(json, "mpi wait reply");
  MpiWaitReply m;
  m.done = r.Bool("done", false);
  m.exit_code = r.Int("exit_code", 1, 0, 255);
  if (!r.ok()) return r.status();
  return m;
}

}  // namespace shoal::protocol
