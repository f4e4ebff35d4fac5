#include "spec/spec_document.h"

#include <stdexcept>

#include "common/units.h"

namespace shoal {
namespace {

// The largest unit that states `value` exactly: 1536 MiB is "1536M", 1 GiB is "1G".
template <size_t N>
std::string ExactInUnits(int64_t value, const std::pair<int64_t, const char*> (&units)[N]) {
  if (value == 0) return "0";
  for (const auto& [size, suffix] : units) {
    if (value % size == 0) return std::to_string(value / size) + suffix;
  }
  return std::to_string(value);
}

std::string MemoryText(int64_t bytes) {
  static const std::pair<int64_t, const char*> kUnits[] = {{1ll << 40, "T"}, {1ll << 30, "G"}, {1ll << 20, "M"}, {1ll << 10, "K"}};
  return ExactInUnits(bytes, kUnits);
}

std::string DurationText(int64_t millis) {
  static const std::pair<int64_t, const char*> kUnits[] = {{3'600'000, "h"}, {60'000, "m"}, {1'000, "s"}, {1, "ms"}};
  return ExactInUnits(millis, kUnits);
}

int64_t ReadUnits(const Json& value, Result<int64_t> (*parse)(std::string_view)) {
  if (value.is_number_integer()) return value.get<int64_t>();
  Result<int64_t> parsed = parse(value.get<std::string>());
  if (!parsed.ok()) throw std::invalid_argument(parsed.status().message());
  return *parsed;
}

Json EnvDocument(const std::map<std::string, std::string>& env, const std::set<std::string>& secrets) {
  Json out = Json::object();
  for (const auto& [name, value] : env) {
    out[name] = secrets.count(name) ? Json{{"secret", value}} : Json(value);
  }
  return out;
}

std::map<std::string, std::string> EnvFromDocument(const Json& env, std::set<std::string>& secrets) {
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : env.items()) {
    if (value.is_object()) {
      out[name] = value.at("secret").get<std::string>();
      secrets.insert(name);
    } else {
      out[name] = value.get<std::string>();
    }
  }
  return out;
}

Json RoleDocument(const RoleSpec& role, const std::set<std::string>& secrets) {
  Json out{{"name", role.name},
           {"instances", role.instances},
           {"cpus", role.resources.cpus},
           {"memory", MemoryText(role.resources.memory_bytes)},
           {"gpus", role.resources.gpus},
           {"command", role.command},
           {"service", role.service}};
  if (!role.env.empty()) out["env"] = EnvDocument(role.env, secrets);
  if (role.tolerate_failure) out["tolerate_failure"] = true;
  if (role.nproc_per_node != 1) out["nproc_per_node"] = role.nproc_per_node;
  if (role.checkpoint) out["checkpoint"] = ToJson(*role.checkpoint);
  if (role.image) out["image"] = role.image->name;
  return out;
}

RoleSpec RoleFromDocument(const Json& r, std::set<std::string>& secrets) {
  RoleSpec role;
  role.name = r.at("name").get<std::string>();
  role.instances = r.value("instances", 1);
  role.resources.cpus = r.value("cpus", 1.0);
  if (r.contains("memory")) role.resources.memory_bytes = ReadUnits(r["memory"], ParseMemory);
  role.resources.gpus = r.value("gpus", 0);
  role.command = r.value("command", "");
  if (r.contains("env")) role.env = EnvFromDocument(r["env"], secrets);
  role.service = r.value("service", false);
  role.tolerate_failure = r.value("tolerate_failure", false);
  role.nproc_per_node = r.value("nproc_per_node", 1);
  if (r.contains("checkpoint")) role.checkpoint = CheckpointFromJson(r["checkpoint"]);
  if (r.contains("image")) role.image = ImageFromJson(r["image"]);
  return role;
}

Json InputDocument(const InputSpec& in) {
  Json out{{"name", in.name}, {"uri", in.uri}, {"mode", Name(in.mode)}};
  if (in.mode == InputMode::kDownload) out["path"] = in.path;
  if (in.mode == InputMode::kStream) {
    out["epochs"] = in.epochs;
    out["shuffle"] = in.shuffle;
  }
  if (!in.roles.empty()) out["roles"] = in.roles;
  return out;
}

InputSpec InputFromDocument(const Json& i) {
  InputSpec in;
  in.name = i.at("name").get<std::string>();
  in.uri = i.at("uri").get<std::string>();
  std::string mode = i.value("mode", "download");
  auto parsed = Parse<InputMode>(mode);
  if (!parsed) throw std::invalid_argument("unknown input mode '" + mode + "'");
  in.mode = *parsed;
  in.path = i.value("path", in.name);
  in.epochs = i.value("epochs", 1);
  in.shuffle = i.value("shuffle", false);
  in.roles = i.value("roles", std::vector<std::string>{});
  return in;
}

Json OutputDocument(const OutputSpec& out) {
  Json doc{{"name", out.name}, {"path", out.path}, {"uri", out.uri}, {"on_failure", out.on_failure}};
  if (!out.from.empty()) doc["from"] = out.from;
  return doc;
}

OutputSpec OutputFromDocument(const Json& o) {
  OutputSpec out;
  out.name = o.at("name").get<std::string>();
  out.path = o.value("path", out.name);
  out.uri = o.at("uri").get<std::string>();
  out.from = o.value("from", "");
  out.on_failure = o.value("on_failure", false);
  return out;
}

Json TimeoutsDocument(const Timeouts& t) {
  return Json{{"heartbeat", DurationText(t.heartbeat_ms)},
              {"register", DurationText(t.register_ms)},
              {"job", DurationText(t.job_ms)},
              {"hang", DurationText(t.hang_ms)},
              {"on_hang", t.hang_fails ? "fail" : "flag"}};
}

Timeouts TimeoutsFromDocument(const Json& t) {
  Timeouts out;
  if (t.contains("heartbeat")) out.heartbeat_ms = ReadUnits(t["heartbeat"], ParseDuration);
  if (t.contains("register")) out.register_ms = ReadUnits(t["register"], ParseDuration);
  if (t.contains("job")) out.job_ms = ReadUnits(t["job"], ParseDuration);
  if (t.contains("hang")) out.hang_ms = ReadUnits(t["hang"], ParseDuration);
  out.hang_fails = t.value("on_hang", "flag") == "fail";
  return out;
}

void MaskEnv(Json& env) {
  if (!env.is_object()) return;
  for (auto& [name, value] : env.items()) {
    if (value.is_object() && value.contains("secret")) value["secret"] = kSecretMask;
  }
}

}  // namespace

Json SpecDocument(const JobSpec& spec) {
  Json roles = Json::array();
  for (const auto& role : spec.roles) roles.push_back(RoleDocument(role, spec.secrets));
  Json doc{{"name", spec.name},
           {"framework", spec.framework},
           {"workdir", spec.workdir},
           {"max_attempts", spec.max_attempts},
           {"env", EnvDocument(spec.env, spec.secrets)},
           {"timeouts", TimeoutsDocument(spec.timeouts)},
           {"roles", roles}};
  if (!spec.cluster.empty()) doc["cluster"] = spec.cluster;
  doc["queue"] = spec.queue;
  doc["priority"] = spec.priority;
  if (spec.estimate_ms > 0) doc["estimate"] = DurationText(spec.estimate_ms);
  doc["preemption_grace"] = DurationText(spec.preemption_grace_ms);
  if (spec.checkpoint) doc["checkpoint"] = ToJson(*spec.checkpoint);
  if (spec.image) doc["image"] = spec.image->name;
  if (!spec.slurm.empty()) {
    doc["slurm"] = SlurmSectionJson(spec.slurm);
    if (doc["slurm"].contains("time_ms")) {
      doc["slurm"]["time"] = DurationText(spec.slurm.time_ms);
      doc["slurm"].erase("time_ms");
    }
  }
  if (!spec.files.empty()) doc["files"] = spec.files;
  if (!spec.archives.empty()) {
    Json archives = Json::array();
    for (const auto& a : spec.archives) archives.push_back({{"path", a.path}, {"name", a.name}, {"prepend", a.prepend}});
    doc["archives"] = archives;
  }
  if (!spec.inputs.empty()) {
    doc["inputs"] = Json::array();
    for (const auto& in : spec.inputs) doc["inputs"].push_back(InputDocument(in));
  }
  if (!spec.outputs.empty()) {
    doc["outputs"] = Json::array();
    for (const auto& out : spec.outputs) doc["outputs"].push_back(OutputDocument(out));
  }
  if (!spec.board.command.empty()) {
    doc["board"] = {{"command", spec.board.command}, {"role", spec.board.role}, {"index", spec.board.index}};
  }
  return doc;
}

JobSpec JobSpecFromDocument(const Json& document) {
  JobSpec spec;
  spec.name = document.value("name", "");
  spec.framework = document.value("framework", "generic");
  spec.cluster = document.value("cluster", "");
  spec.workdir = document.value("workdir", "");
  spec.max_attempts = document.value("max_attempts", 1);
  spec.queue = document.value("queue", "default");
  spec.priority = document.value("priority", 0);
  if (document.contains("estimate")) spec.estimate_ms = ReadUnits(document["estimate"], ParseDuration);
  if (document.contains("preemption_grace")) {
    spec.preemption_grace_ms = ReadUnits(document["preemption_grace"], ParseDuration);
  }
  if (document.contains("checkpoint")) spec.checkpoint = CheckpointFromJson(document["checkpoint"]);
  if (document.contains("image")) spec.image = ImageFromJson(document["image"]);
  if (document.contains("env")) spec.env = EnvFromDocument(document["env"], spec.secrets);
  if (document.contains("timeouts")) spec.timeouts = TimeoutsFromDocument(document["timeouts"]);
  if (document.contains("slurm")) {
    spec.slurm = SlurmSectionFromJson(document["slurm"]);
    if (document["slurm"].contains("time")) spec.slurm.time_ms = ReadUnits(document["slurm"]["time"], ParseDuration);
  }
  for (const Json& r : document.value("roles", Json::array())) spec.roles.push_back(RoleFromDocument(r, spec.secrets));
  spec.files = document.value("files", std::vector<std::string>{});
  for (const Json& a : document.value("archives", Json::array())) {
    spec.archives.push_back({a.at("path").get<std::string>(), a.at("name").get<std::string>(),
                             a.value("prepend", std::map<std::string, std::vector<std::string>>{})});
  }
  for (const Json& i : document.value("inputs", Json::array())) spec.inputs.push_back(InputFromDocument(i));
  for (const Json& o : document.value("outputs", Json::array())) spec.outputs.push_back(OutputFromDocument(o));
  if (document.contains("board")) {
    const Json& b = document["board"];
    spec.board = {b.value("command", ""), b.value("role", ""), b.value("index", 0)};
  }
  return spec;
}

Json MaskSecretValues(Json document) {
  if (document.contains("env")) MaskEnv(document["env"]);
  if (document.contains("roles") && document["roles"].is_array()) {
    for (Json& role : document["roles"]) {
      if (role.is_object() && role.contains("env")) MaskEnv(role["env"]);
    }
  }
  return document;
}

bool IsInternalSpecJson(const Json& json) { return json.is_object() && json.contains("secrets"); }

}  // namespace shoal
