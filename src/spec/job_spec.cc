#include "spec/job_spec.h"

#include <cmath>
#include <cstdio>

#include "common/units.h"

namespace shoal {

std::string Resources::ToString() const {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%g CPU%s, %s memory, %d GPU%s", cpus, cpus == 1 ? "" : "s",
                FormatMemory(memory_bytes).c_str(), gpus, gpus == 1 ? "" : "s");
  return buf;
}

int JobSpec::TotalTasks() const {
  int total = 0;
  for (const auto& role : roles) total += role.instances;
  return total;
}

Resources JobSpec::TotalResources() const {
  Resources total;
  for (const auto& role : roles) total += role.resources * role.instances;
  return total;
}

const RoleSpec* JobSpec::FindRole(const std::string& name) const {
  for (const auto& role : roles) {
    if (role.name == name) return &role;
  }
  return nullptr;
}

const CheckpointSpec* JobSpec::CheckpointOf(const RoleSpec& role) const {
  if (role.checkpoint) return &*role.checkpoint;
  return checkpoint ? &*checkpoint : nullptr;
}

const ImageSpec* JobSpec::ImageOf(const RoleSpec& role) const {
  if (role.image) return &*role.image;
  return image ? &*image : nullptr;
}

ImageSpec* JobSpec::ImageOf(RoleSpec& role) {
  if (role.image) return &*role.image;
  return image ? &*image : nullptr;
}

Json ToJson(const ImageSpec& image) { return {{"name", image.name}, {"id", image.id}, {"rootfs", image.rootfs}}; }

ImageSpec ImageFromJson(const Json& json) {
  if (json.is_string()) return ImageSpec{json.get<std::string>(), "", ""};  // the spec document's form
  return ImageSpec{json.value("name", ""), json.value("id", ""), json.value("rootfs", "")};
}

Json ToJson(const CheckpointSpec& checkpoint) {
  return {{"path", checkpoint.path}, {"uri", checkpoint.uri}, {"keep", checkpoint.keep}};
}

CheckpointSpec CheckpointFromJson(const Json& json) {
  CheckpointSpec checkpoint;
  checkpoint.path = json.value("path", checkpoint.path);
  checkpoint.uri = json.value("uri", "");
  checkpoint.keep = json.value("keep", checkpoint.keep);
  return checkpoint;
}

Json ToJson(const JobSpec& spec) {
  Json archives = Json::array();
  for (const auto& a : spec.archives) archives.push_back({{"path", a.path}, {"name", a.name}, {"prepend", a.prepend}});
  Json roles = Json::array();
  for (const auto& role : spec.roles) {
    roles.push_back({{"name", role.name},
                     {"instances", role.instances},
                     {"cpus", role.resources.cpus},
                     {"memory_bytes", role.resources.memory_bytes},
                     {"gpus", role.resources.gpus},
                     {"command", role.command},
                     {"env", role.env},
                     {"service", role.service},
                     {"tolerate_failure", role.tolerate_failure},
                     {"nproc_per_node", role.nproc_per_node}});
    if (role.checkpoint) roles.back()["checkpoint"] = ToJson(*role.checkpoint);
    if (role.image) roles.back()["image"] = ToJson(*role.image);
  }
  Json inputs = Json::array();
  for (const auto& in : spec.inputs) {
    inputs.push_back({{"name", in.name}, {"uri", in.uri}, {"mode", Name(in.mode)}, {"path", in.path},
                      {"epochs", in.epochs}, {"shuffle", in.shuffle}, {"roles", in.roles}});
  }
  Json outputs = Json::array();
  for (const auto& out : spec.outputs) {
    outputs.push_back({{"name", out.name}, {"path", out.path}, {"uri", out.uri}, {"from", out.from},
                       {"on_failure", out.on_failure}});
  }
  Json json{{"name", spec.name},
              {"inputs", inputs},
              {"outputs", outputs},
              {"framework", spec.framework},
              {"cluster", spec.cluster},
              {"user", spec.user},
              {"workdir", spec.workdir},
              {"roles", roles},
              {"env", spec.env},
              {"secrets", spec.secrets},
              {"max_attempts", spec.max_attempts},
              {"queue", spec.queue},
              {"priority", spec.priority},
              {"estimate_ms", spec.estimate_ms},
              {"board", {{"command", spec.board.command}, {"role", spec.board.role}, {"index", spec.board.index}}},
              {"files", spec.files},
              {"archives", archives},
              {"slurm", SlurmSectionJson(spec.slurm)},
              {"timeouts",
               {{"heartbeat_ms", spec.timeouts.heartbeat_ms},
                {"register_ms", spec.timeouts.register_ms},
                {"job_ms", spec.timeouts.job_ms},
                {"hang_ms", spec.timeouts.hang_ms},
                {"hang_fails", spec.timeouts.hang_fails}}},
              {"preemption_grace_ms", spec.preemption_grace_ms}};
  if (spec.checkpoint) json["checkpoint"] = ToJson(*spec.checkpoint);
  if (spec.image) json["image"] = ToJson(*spec.image);
  return json;
}

JobSpec JobSpecFromJson(const Json& json) {
  JobSpec spec;
  spec.name = json.value("name", "");
  spec.framework = json.value("framework", "generic");
  spec.cluster = json.value("cluster", "");
  spec.user = json.value("user", "");
  spec.workdir = json.value("workdir", "");
  spec.env = json.value("env", std::map<std::string, std::string>{});
  spec.secrets = json.value("secrets", std::set<std::string>{});
  spec.max_attempts = json.value("max_attempts", 1);
  spec.queue = json.value("queue", "default");
  spec.priority = json.value("priority", 0);
  spec.estimate_ms = json.value("estimate_ms", int64_t{0});
  spec.preemption_grace_ms = json.value("preemption_grace_ms", spec.preemption_grace_ms);
  if (json.contains("checkpoint")) spec.checkpoint = CheckpointFromJson(json["checkpoint"]);
  if (json.contains("image")) spec.image = ImageFromJson(json["image"]);
  if (json.contains("slurm")) spec.slurm = SlurmSectionFromJson(json["slurm"]);
  if (json.contains("timeouts")) {
    const Json& t = json["timeouts"];
    spec.timeouts.heartbeat_ms = t.value("heartbeat_ms", spec.timeouts.heartbeat_ms);
    spec.timeouts.register_ms = t.value("register_ms", spec.timeouts.register_ms);
    spec.timeouts.job_ms = t.value("job_ms", spec.timeouts.job_ms);
    spec.timeouts.hang_ms = t.value("hang_ms", spec.timeouts.hang_ms);
    spec.timeouts.hang_fails = t.value("hang_fails", spec.timeouts.hang_fails);
  }
  if (json.contains("board")) {
    spec.board.command = json["board"].value("command", "");
    spec.board.role = json["board"].value("role", "");
    spec.board.index = json["board"].value("index", 0);
  }
  spec.files = json.value("files", std::vector<std::string>{});
  for (const Json& i : json.value("inputs", Json::array())) {
    spec.inputs.push_back({i.value("name", ""), i.value("uri", ""), Parse<InputMode>(i.value("mode", "download")).value_or(InputMode::kDownload), i.value("path", ""),
                           i.value("epochs", 1), i.value("shuffle", false),
                           i.value("roles", std::vector<std::string>{})});
  }
  for (const Json& o : json.value("outputs", Json::array())) {
    spec.outputs.push_back({o.value("name", ""), o.value("path", ""), o.value("uri", ""), o.value("from", ""),
                            o.value("on_failure", false)});
  }
  for (const Json& a : json.value("archives", Json::array())) {
    spec.archives.push_back({a.value("path", ""), a.value("name", ""),
                             a.value("prepend", std::map<std::string, std::vector<std::string>>{})});
  }
  for (const Json& r : json.value("roles", Json::array())) {
    RoleSpec role;
    role.name = r.value("name", "");
    role.instances = r.value("instances", 1);
    role.resources.cpus = r.value("cpus", 1.0);
    role.resources.memory_bytes = r.value("memory_bytes", int64_t{1} << 30);
    role.resources.gpus = r.value("gpus", 0);
    role.command = r.value("command", "");
    role.env = r.value("env", std::map<std::string, std::string>{});
    role.service = r.value("service", false);
    role.tolerate_failure = r.value("tolerate_failure", false);
    role.nproc_per_node = r.value("nproc_per_node", 1);
    if (r.contains("checkpoint")) role.checkpoint = CheckpointFromJson(r["checkpoint"]);
    if (r.contains("image")) role.image = ImageFromJson(r["image"]);
    spec.roles.push_back(std::move(role));
  }
  return spec;
}

std::vector<std::string> SecretValues(const JobSpec& spec) {
  std::vector<std::string> values;
  auto collect = [&](const std::map<std::string, std::string>& env) {
    for (const auto& name : spec.secrets) {
      if (auto it = env.find(name); it != env.end() && !it->second.empty()) values.push_back(it->second);
    }
  };
  collect(spec.env);
  for (const auto& role : spec.roles) collect(role.env);
  return values;
}

}  // namespace shoal
