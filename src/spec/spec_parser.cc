#include "spec/spec_parser.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <exception>
#include <functional>
#include <cstring>
#include <regex>
#include <set>
#include <sstream>

#include "common/files.h"
#include "common/shell_quote.h"
#include "common/units.h"
#include "spec/data_variables.h"
#include "spec/framework_roles.h"

namespace shoal {
namespace {

const std::vector<std::string> kJobFields = {"name", "framework", "workdir", "roles", "env", "max_attempts", "timeouts",
                                             "cluster", "board", "files", "archives", "inputs", "outputs", "slurm",
                                             "queue", "priority", "estimate", "preemption_grace", "checkpoint",
                                             "image"};
const std::vector<std::string> kCheckpointFields = {"path", "uri", "keep"};
const std::vector<std::string> kInputFields = {"name", "uri", "mode", "path", "epochs", "shuffle", "roles"};
const std::vector<std::string> kOutputFields = {"name", "path", "uri", "from", "on_failure"};
const std::vector<std::string> kArchiveFields = {"path", "name", "prepend"};
const std::vector<std::string> kPrependable = {"PATH", "PYTHONPATH", "LD_LIBRARY_PATH"};
const std::vector<std::string> kBoardFields = {"command", "role", "index"};
const std::vector<std::string> kRoleFields = {"instances", "cpus", "memory", "gpus", "command", "env",
                                              "service", "tolerate_failure", "nproc_per_node", "checkpoint",
                                              "image"};
const std::vector<std::string> kTimeoutFields = {"heartbeat", "register", "job", "hang", "on_hang"};
const std::vector<std::string> kSlurmFields = {"partition", "account", "qos", "time", "constraint", "reservation", "extra"};

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// A variable both lists hold, or "".
std::string SharedVariable(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  for (const auto& name : a) {
    if (std::find(b.begin(), b.end(), name) != b.end()) return name;
  }
  return "";
}

bool IsValidJobName(const std::string& name) {
  static const std::regex kName("[A-Za-z0-9][A-Za-z0-9_.-]{0,127}");
  return std::regex_match(name, kName);
}

// The name of a job whose spec gives none: the spec file's name (or the API's
// default_name), made into a valid job name, since the user did not choose it: every run
// of characters a name cannot hold becomes one '-', leading and trailing punctuation goes
// ("../../etc/passwd" -> "etc-passwd"), and what is left is cut to 128 characters;
// "job" when nothing is left.
std::string SafeJobName(const std::string& wanted) {
  std::string name;
  for (char c : wanted) {
    bool allowed = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
    if (allowed) name.push_back(c);
    else if (!name.empty() && name.back() != '-') name.push_back('-');
  }
  auto is_alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  auto first = std::find_if(name.begin(), name.end(), is_alnum);
  name.erase(name.begin(), first);
  if (name.size() > 128) name.resize(128);
  while (!name.empty() && !is_alnum(name.back())) name.pop_back();
  return name.empty() ? "job" : name;
}

// Reads one YAML document into typed fields, collecting issues instead of stopping.
class SpecReader {
 public:
  SpecReader(const ParseOptions& options, SourceMap& sources, std::vector<SpecIssue>& issues)
      : options_(options), sources_(sources), issues_(issues) {}

  JobSpec Read(const YAML::Node& root) {
    JobSpec spec;
    spec.name = SafeJobName(options_.default_name);
    spec.workdir = AbsolutePath(options_.base_dir);
    if (!root.IsMap()) {
      Issue("(document)", "must be a mapping of fields such as name, framework and roles",
            "start from the example in docs/job-spec.md");
      return spec;
    }
    RecordLines(root, "");
    CheckKnownFields(root, "", kJobFields);
    if (auto n = root["name"]) {
      ReadString(n, "name", &spec.name);
      if (!IsValidJobName(spec.name)) {
        Issue("name", "'" + spec.name + "' is not a valid job name",
              "use letters, digits, '.', '_' and '-', starting with a letter or digit, at most 128 characters");
      }
    }
    if (auto n = root["framework"]) {
      ReadString(n, "framework", &spec.framework);
      if (std::find(options_.known_frameworks.begin(), options_.known_frameworks.end(), spec.framework) ==
          options_.known_frameworks.end()) {
        Issue("framework", "unknown framework '" + spec.framework + "'",
              "use one of: " + Join(options_.known_frameworks));
      }
    }
    if (auto n = root["cluster"]) {
      ReadString(n, "cluster", &spec.cluster);
      if (spec.cluster != "local" && spec.cluster != "slurm") {
        Issue("cluster", "unknown cluster '" + spec.cluster + "'", "use local (this machine) or slurm");
      }
    }
    if (auto n = root["workdir"]) {
      std::string dir;
      if (ReadString(n, "workdir", &dir)) {
        spec.workdir = AbsolutePath(dir.starts_with("/") ? dir : options_.base_dir + "/" + dir);
      }
    }
    if (auto n = root["env"]) ReadEnv(n, "env", &spec.env);
    if (auto n = root["max_attempts"]) {
      ReadInt(n, "max_attempts", &spec.max_attempts);
      if (spec.max_attempts < 1 || spec.max_attempts > 100) {
        Issue("max_attempts", "must be between 1 and 100 (got " + std::to_string(spec.max_attempts) + ")",
              "set how many times the job may run in all, e.g. max_attempts: 3");
      }
    }
    if (auto n = root["timeouts"]) ReadTimeouts(n, &spec.timeouts);
    ReadPlace(root, &spec);
    if (auto n = root["slurm"]) ReadSlurm(n, &spec.slurm);
    auto roles = root["roles"];
    if (!roles) {
      Issue("roles", "is missing", "add a roles section, e.g. roles: {worker: {instances: 2, command: python3 train.py}}");
    } else if (!roles.IsMap() || roles.size() == 0) {
      Issue("roles", "must map role names to their settings",
            "e.g. roles: {worker: {instances: 2, command: ...}}, or list them: roles: [{name: worker, command: ...}]");
    } else {
      for (auto it = roles.begin(); it != roles.end(); ++it) {
        spec.roles.push_back(ReadRole(spec.framework, it->first.Scalar(), it->second));
      }
      CheckFrameworkRoles(spec);
    }
    if (auto n = root["board"]) ReadBoard(n, spec);
    if (auto n = root["files"]) ReadFiles(n, spec);
    if (auto n = root["archives"]) ReadArchives(n, spec);
    if (auto n = root["inputs"]) ReadInputs(n, spec);
    if (auto n = root["outputs"]) ReadOutputs(n, spec);
    if (auto n = root["checkpoint"]) spec.checkpoint = ReadCheckpoint(n, "checkpoint");
    if (auto n = root["image"]) spec.image = ReadImage(n, "image");
    CheckCheckpointsApart(spec);
    spec.secrets = secrets_;
    return spec;
  }

  // A local path or file:// URI, made absolute against the spec's folder.
  std::string ResolvePath(std::string path) {
    if (path.starts_with("file://")) path = path.substr(7);
    return AbsolutePath(path.starts_with("/") ? path : options_.base_dir + "/" + path);
  }

  bool IsSupportedLocation(const std::string& field, const std::string& location) {
    size_t scheme = location.find("://");
    if (scheme != std::string::npos && !location.starts_with("file://")) {
      Issue(field, "'" + location + "': only local paths and file:// URIs can be shipped so far",
            "copy it to a shared or local path first");
      return false;
    }
    return true;
  }

  void ReadFiles(const YAML::Node& node, JobSpec& spec) {
    if (!node.IsSequence()) {
      Issue("files", "must be a list of paths", "e.g. files: [config.json, vocab.txt]");
      return;
    }
    for (size_t i = 0; i < node.size(); ++i) {
      std::string field = "files[" + std::to_string(i) + "]", path;
      if (!ReadString(node[i], field, &path) || !IsSupportedLocation(field, path)) continue;
      spec.files.push_back(ResolvePath(path));
      ClaimShippedName(field, spec.files.back().substr(spec.files.back().rfind('/') + 1), "a copy of " + path);
    }
  }

  void ReadArchives(const YAML::Node& node, JobSpec& spec) {
    if (!node.IsSequence()) {
      Issue("archives", "must be a list", "e.g. archives: [{path: env.tar.gz, prepend: {PYTHONPATH: [.]}}]");
      return;
    }
    static const std::regex kName("[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}");
    for (size_t i = 0; i < node.size(); ++i) {
      std::string field = "archives[" + std::to_string(i) + "]";
      const YAML::Node& entry = node[i];
      ArchiveSpec archive;
      if (entry.IsScalar()) {
        archive.path = entry.Scalar();
      } else if (entry.IsMap()) {
        CheckKnownFields(entry, field, kArchiveFields);
        if (auto n = entry["path"]) ReadString(n, field + ".path", &archive.path);
        if (auto n = entry["name"]) ReadString(n, field + ".name", &archive.name);
        if (auto n = entry["prepend"]) ReadPrepend(n, field + ".prepend", &archive.prepend);
      } else {
        Issue(field, "must be a path or a mapping with path, name and prepend", "e.g. - {path: env.tar.gz}");
        continue;
      }
      if (archive.path.empty()) {
        Issue(field + ".path", "is missing", "give the archive's path (.tar.gz, .tgz, .tar or .zip)");
        continue;
      }
      if (!IsSupportedLocation(field + ".path", archive.path)) continue;
      archive.path = ResolvePath(archive.path);
      if (archive.name.empty()) {
        std::string base = archive.path.substr(archive.path.rfind('/') + 1);
        for (const char* ext : {".tar.gz", ".tgz", ".tar", ".zip"}) {
          if (base.ends_with(ext)) {
            base.resize(base.size() - std::strlen(ext));
            break;
          }
        }
        archive.name = base;
      }
      if (!std::regex_match(archive.name, kName) || archive.name == "." || archive.name == "..") {
        Issue(field + ".name", "'" + archive.name + "' is not a folder name", "use letters, digits, '.', '_' and '-'");
        continue;
      }
      ClaimShippedName(field + ".name", archive.name, "the unpacked " + archive.path);
      spec.archives.push_back(std::move(archive));
    }
  }

  // Files and archives land in the task's folder under their base name (an archive under
  // its name): two with one name would leave only the later one there.
  void ClaimShippedName(const std::string& field, const std::string& name, const std::string& what) {
    auto [earlier, fresh] = shipped_names_.emplace(name, std::make_pair(field, what));
    if (fresh) return;
    Issue(field, what + " would land in the task's folder as '" + name + "', where " + earlier->second.first +
                     " (" + earlier->second.second + ") already is",
          "ship them under different names (rename one, or give an archive its own name:)");
  }

  // A storage URI: a path (made absolute), file:// or s3://. Globs are allowed in inputs.
  bool ReadStorageUri(const YAML::Node& node, const std::string& field, std::string* uri) {
    if (!ReadString(node, field, uri)) return false;
    size_t scheme = uri->find("://");
    if (scheme == std::string::npos || uri->starts_with("file://")) {
      *uri = ResolvePath(*uri);
      return true;
    }
    if (!uri->starts_with("s3://")) {
      Issue(field, "unknown storage scheme '" + uri->substr(0, scheme) + "://' in '" + *uri + "'",
            "use a path, file:///path (a shared file system) or s3://bucket/key");
      return false;
    }
    if (uri->size() <= 5 || (*uri)[5] == '/') {
      Issue(field, "'" + *uri + "' names no bucket", "write s3://bucket/key");
      return false;
    }
    return true;
  }

  static bool HasGlobCharacter(const std::string& uri) { return uri.find_first_of("*?[") != std::string::npos; }

  // A name for an input or output: letters, digits and '_'.
  bool ReadDataName(const YAML::Node& entry, const std::string& field, std::string* name) {
    static const std::regex kDataName("[A-Za-z_][A-Za-z0-9_]{0,63}");
    if (!entry["name"]) {
      Issue(field + ".name", "is missing", "name it, e.g. name: train");
      return false;
    }
    if (!ReadString(entry["name"], field + ".name", name)) return false;
    if (!std::regex_match(*name, kDataName)) {
      Issue(field + ".name", "'" + *name + "' is not a valid name", "use letters, digits and '_'");
      return false;
    }
    return true;
  }

  // A folder inside the task directory.
  void CheckTaskFolder(const std::string& field, const std::string& path) {
    if (path.empty() || path.starts_with("/") || path.find("..") != std::string::npos) {
      Issue(field, "'" + path + "' must be a folder inside the task directory", "write it relative, e.g. model/");
    }
  }

  void ReadInputs(const YAML::Node& node, JobSpec& spec) {
    if (!node.IsSequence()) {
      Issue("inputs", "must be a list", "e.g. inputs: [{name: train, uri: \"s3://bucket/data/*.csv\", mode: download}]");
      return;
    }
    for (size_t i = 0; i < node.size(); ++i) {
      std::string field = "inputs[" + std::to_string(i) + "]";
      const YAML::Node& entry = node[i];
      if (!entry.IsMap()) {
        Issue(field, "must be a mapping with name, uri and mode", "e.g. - {name: train, uri: data/*.txt}");
        continue;
      }
      CheckKnownFields(entry, field, kInputFields);
      InputSpec input;
      bool ok = ReadDataName(entry, field, &input.name);
      if (!entry["uri"]) {
        Issue(field + ".uri", "is missing", "give where the data is: a path, file:// or s3://bucket/key (globs work)");
        ok = false;
      } else {
        ok = ReadStorageUri(entry["uri"], field + ".uri", &input.uri) && ok;
      }
      if (auto n = entry["mode"]) {
        std::string mode;
        ReadString(n, field + ".mode", &mode);
        if (auto parsed = Parse<InputMode>(mode)) {
          input.mode = *parsed;
        } else {
          Issue(field + ".mode", "unknown mode '" + mode + "'", std::string("use one of ") + NameList<InputMode>());
          ok = false;
        }
      }
      input.path = input.name;
      if (auto n = entry["path"]) {
        ReadString(n, field + ".path", &input.path);
        CheckTaskFolder(field + ".path", input.path);
      }
      if (auto n = entry["epochs"]) {
        if (ReadInt(n, field + ".epochs", &input.epochs) && input.epochs < 1) {
          Issue(field + ".epochs", "must be at least 1", "write e.g. epochs: 2");
        }
      }
      if (auto n = entry["shuffle"]) ReadBool(n, field + ".shuffle", &input.shuffle);
      if (input.mode != InputMode::kStream && (entry["epochs"] || entry["shuffle"])) {
        Issue(field, "epochs and shuffle apply to stream mode only", "set mode: stream or remove them");
      }
      if (auto n = entry["roles"]) {
        if (!n.IsSequence()) {
          Issue(field + ".roles", "must be a list of role names", "e.g. roles: [worker]");
        } else {
          for (size_t r = 0; r < n.size(); ++r) {
            std::string role;
            if (!ReadString(n[r], field + ".roles", &role)) continue;
            if (!spec.FindRole(role)) Issue(field + ".roles", "the job has no role '" + role + "'", "name one of the job's roles");
            input.roles.push_back(role);
          }
        }
      }
      for (size_t j = 0; ok && j < spec.inputs.size(); ++j) {
        const InputSpec& other = spec.inputs[j];
        if (other.name == input.name) {
          Issue(field + ".name", "'" + input.name + "' is used twice", "give each input its own name");
          ok = false;
        } else if (std::string shared = SharedVariable(InputVariables(other.name, other.mode),
                                                       InputVariables(input.name, input.mode));
                   !shared.empty()) {
          Issue(field + ".name", "'" + input.name + "' and '" + other.name + "' (inputs[" + std::to_string(j) +
                                     "]) would both set " + shared + ", and the program would see only one of them",
                "give the inputs names that differ in more than upper and lower case");
          ok = false;
        }
      }
      if (ok) spec.inputs.push_back(std::move(input));
    }
  }

  void ReadOutputs(const YAML::Node& node, JobSpec& spec) {
    if (!node.IsSequence()) {
      Issue("outputs", "must be a list", "e.g. outputs: [{name: model, path: model/, uri: s3://bucket/out/model}]");
      return;
    }
    static const std::regex kFrom("([A-Za-z0-9_.-]+)\\[([0-9]+)\\]");
    for (size_t i = 0; i < node.size(); ++i) {
      std::string field = "outputs[" + std::to_string(i) + "]";
      const YAML::Node& entry = node[i];
      if (!entry.IsMap()) {
        Issue(field, "must be a mapping with name, path and uri", "e.g. - {name: model, path: model/, uri: out/model}");
        continue;
      }
      CheckKnownFields(entry, field, kOutputFields);
      OutputSpec output;
      bool ok = ReadDataName(entry, field, &output.name);
      if (!entry["uri"]) {
        Issue(field + ".uri", "is missing", "give where to upload: a path, file:// or s3://bucket/key");
        ok = false;
      } else if (ReadStorageUri(entry["uri"], field + ".uri", &output.uri)) {
        if (HasGlobCharacter(output.uri)) {
          Issue(field + ".uri", "an output URI cannot hold glob characters", "name one folder");
          ok = false;
        }
      } else {
        ok = false;
      }
      output.path = output.name;
      if (auto n = entry["path"]) ReadString(n, field + ".path", &output.path);
      CheckTaskFolder(field + ".path", output.path);
      if (auto n = entry["from"]) {
        ReadString(n, field + ".from", &output.from);
        std::smatch m;
        const RoleSpec* role = nullptr;
        if (std::regex_match(output.from, m, kFrom)) role = spec.FindRole(m[1]);
        if (!role || m[2].length() > 6 || std::stoi(m[2]) >= role->instances) {
          Issue(field + ".from", "'" + output.from + "' is not a task of this job", "write role[index], e.g. worker[0]");
          ok = false;
        }
      }
      if (auto n = entry["on_failure"]) ReadBool(n, field + ".on_failure", &output.on_failure);
      for (size_t j = 0; ok && j < spec.outputs.size(); ++j) {
        const OutputSpec& other = spec.outputs[j];
        if (OutputFolderVariable(other.name) != OutputFolderVariable(output.name)) continue;
        Issue(field + ".name", "'" + output.name + "' and '" + other.name + "' (outputs[" + std::to_string(j) +
                                   "]) would both set " + OutputFolderVariable(output.name),
              "give each output its own name, differing in more than upper and lower case");
        ok = false;
      }
      for (size_t j = 0; ok && j < spec.outputs.size(); ++j) {
        const OutputSpec& other = spec.outputs[j];
        if (!UrisOverlap(output.uri, other.uri)) continue;
        Issue(field + ".uri", "'" + output.uri + "' overlaps outputs[" + std::to_string(j) + "]'s '" + other.uri +
                                  "': each commit replaces what earlier commits put in its folder, so one output would "
                                  "delete the other's files",
              "give each output a folder of its own, neither inside the other");
        ok = false;
      }
      if (ok) spec.outputs.push_back(std::move(output));
    }
  }

  // Whether two output URIs are one folder or one holds the other ("file://" and a plain
  // path being the same place).
  static bool UrisOverlap(std::string a, std::string b) {
    for (std::string* uri : {&a, &b}) {
      if (uri->starts_with("file://")) uri->erase(0, 7);
      while (uri->size() > 1 && uri->ends_with('/')) uri->pop_back();
    }
    return a == b || a.starts_with(b + "/") || b.starts_with(a + "/");
  }

  void ReadPrepend(const YAML::Node& node, const std::string& field,
                   std::map<std::string, std::vector<std::string>>* prepend) {
    if (!node.IsMap()) {
      Issue(field, "must map variables to paths inside the archive", "e.g. prepend: {PYTHONPATH: [.], PATH: [bin]}");
      return;
    }
    for (auto it = node.begin(); it != node.end(); ++it) {
      std::string var = it->first.IsScalar() ? it->first.Scalar() : "";
      if (std::find(kPrependable.begin(), kPrependable.end(), var) == kPrependable.end()) {
        Issue(field + "." + var, "only PATH, PYTHONPATH and LD_LIBRARY_PATH can be prepended", "remove it");
        continue;
      }
      std::vector<std::string> paths;
      const YAML::Node listed = it->second;  // a copy: a range-for over it->second would outlive its proxy
      if (listed.IsScalar()) {
        paths.push_back(listed.Scalar());
      } else if (listed.IsSequence()) {
        for (const auto& p : listed) {
          if (p.IsScalar()) paths.push_back(p.Scalar());
        }
      }
      for (const auto& p : paths) {
        if (p.starts_with("/") || p.find("..") != std::string::npos) {
          Issue(field + "." + var, "'" + p + "' must be a path inside the archive", "write it relative, e.g. lib");
        }
      }
      (*prepend)[var] = paths;
    }
  }

  void ReadBoard(const YAML::Node& node, JobSpec& spec) {
    if (!node.IsMap()) {
      Issue("board", "must be a mapping", "e.g. board: {command: tensorboard --logdir logs --port $SHOAL_BOARD_PORT}");
      return;
    }
    CheckKnownFields(node, "board", kBoardFields);
    BoardSpec& board = spec.board;
    if (auto n = node["command"]) ReadString(n, "board.command", &board.command);
    if (board.command.find_first_not_of(" \t\n") == std::string::npos) {
      Issue("board.command", "is missing or empty",
            "give the board's command; it must listen on $SHOAL_BOARD_PORT, e.g. "
            "tensorboard --logdir logs --port $SHOAL_BOARD_PORT --bind_all");
    }
    if (auto n = node["index"]) ReadInt(n, "board.index", &board.index);
    if (auto n = node["role"]) ReadString(n, "board.role", &board.role);
    if (board.role.empty() && !spec.roles.empty()) board.role = spec.roles.front().name;
    const RoleSpec* role = spec.FindRole(board.role);
    if (!role) {
      if (!spec.roles.empty()) Issue("board.role", "the job has no role '" + board.role + "'", "name one of the job's roles");
    } else if (board.index < 0 || board.index >= role->instances) {
      Issue("board.index", "role " + board.role + " has tasks 0 to " + std::to_string(role->instances - 1) +
                               ", not " + std::to_string(board.index), "pick one of them");
    }
  }

  // A framework with a role vocabulary: every role must be one of its, required roles
  // must be there, and some allow only one task.
  void CheckFrameworkRoles(const JobSpec& spec) {
    const FrameworkRoles* rules = RolesOf(spec.framework);
    if (!rules) return;
    std::vector<std::string> names;
    for (const auto& rule : rules->roles) names.push_back(rule.name);
    for (const auto& role : spec.roles) {
      const RoleRule* rule = nullptr;
      for (const auto& r : rules->roles) {
        if (r.name == role.name) rule = &r;
      }
      if (!rule) {
        Issue("roles." + role.name, spec.framework + " jobs have no role '" + role.name + "'",
              "use the roles " + spec.framework + " knows: " + Join(names));
      } else if (rule->max_instances > 0 && role.instances > rule->max_instances) {
        Issue("roles." + role.name + ".instances",
              spec.framework + " allows at most " + std::to_string(rule->max_instances) + " " + role.name +
                  " task (got " + std::to_string(role.instances) + ")",
              "set instances: " + std::to_string(rule->max_instances));
      }
    }
    for (const auto& rule : rules->roles) {
      if (rule.required && !spec.FindRole(rule.name)) {
        Issue("roles", "a " + spec.framework + " job needs a '" + rule.name + "' role",
              "add roles." + rule.name + " with its instances and command");
      }
    }
  }

 private:
  void Issue(const std::string& field, const std::string& problem, const std::string& fix) {
    issues_.push_back({field, problem, fix});
  }

  // Walks the whole document once: records the line of every field, and refuses what no
  // field may hold: a key given twice in one mapping (YAML and JSON readers would keep
  // one of the two silently) and a NUL character in any text (it would end a command, a
  // variable or a path there: `echo a\0b` would run `echo a`).
  void RecordLines(const YAML::Node& node, const std::string& prefix) {
    if (node.IsScalar()) {
      CheckNoNul(prefix, node.Scalar());
    } else if (node.IsSequence()) {
      for (size_t i = 0; i < node.size(); ++i) {
        std::string path = prefix + "[" + std::to_string(i) + "]";
        if (node[i].Mark().line >= 0) sources_.SetLine(path, node[i].Mark().line + 1);
        RecordLines(node[i], path);
      }
    } else if (node.IsMap()) {
      std::map<std::string, int> first_lines;
      for (auto it = node.begin(); it != node.end(); ++it) {
        std::string key = it->first.IsScalar() ? it->first.Scalar() : "?";
        std::string path = prefix.empty() ? key : prefix + "." + key;
        int line = it->first.Mark().line >= 0 ? it->first.Mark().line + 1 : 0;
        if (line > 0) sources_.SetLine(path, line);
        if (auto [first, fresh] = first_lines.emplace(key, line); !fresh && it->first.IsScalar()) {
          Issue(path, "is given twice" + (first->second > 0 ? " (first at line " + std::to_string(first->second) + ")" : ""),
                "keep one of them; two roles, inputs or fields need names of their own");
        }
        if (it->first.IsScalar()) CheckNoNul(path, key);
        RecordLines(it->second, path);
      }
    }
  }

  void CheckNoNul(const std::string& field, const std::string& text) {
    if (text.find('\0') == std::string::npos) return;
    Issue(field, "holds a NUL character (\\0), where a command, a variable or a path would end",
          "remove it; a program that needs a NUL must make it itself");
  }

  void CheckKnownFields(const YAML::Node& map, const std::string& prefix, const std::vector<std::string>& known) {
    for (auto it = map.begin(); it != map.end(); ++it) {
      std::string key = it->first.IsScalar() ? it->first.Scalar() : "(non-text key)";
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      std::string field = prefix.empty() ? key : prefix + "." + key;
      std::string fix = "remove it; known fields here: " + Join(known);
      for (const auto& candidate : known) {
        if (EditDistance(key, candidate) <= 2) fix = "did you mean '" + candidate + "'?";
      }
      Issue(field, "unknown field", fix);
    }
  }

  bool ReadString(const YAML::Node& node, const std::string& field, std::string* out) {
    if (!node.IsScalar()) {
      Issue(field, "must be text", "write a single value, e.g. " + field.substr(field.rfind('.') + 1) + ": value");
      return false;
    }
    *out = node.Scalar();
    return true;
  }

  template <typename T>
  bool ReadNumber(const YAML::Node& node, const std::string& field, T* out, const char* kind) {
    T value{};
    bool ok = node.IsScalar();
    if (ok) {
      try {
        value = node.as<T>();
      } catch (const std::exception&) {
        ok = false;
      }
    }
    if constexpr (std::is_floating_point_v<T>) ok = ok && std::isfinite(value);
    if (!ok) {
      std::string got = node.IsScalar() ? "'" + node.Scalar() + "'" : "a list or mapping";
      Issue(field, std::string("must be ") + kind + " (got " + got + ")", "write e.g. " +
            field.substr(field.rfind('.') + 1) + ": 2");
      return false;
    }
    *out = value;
    return true;
  }
  bool ReadInt(const YAML::Node& node, const std::string& field, int* out) {
    return ReadNumber(node, field, out, "a whole number");
  }

  bool ReadBool(const YAML::Node& node, const std::string& field, bool* out) {
    bool value = false;
    bool ok = node.IsScalar();
    if (ok) {
      try {
        value = node.as<bool>();
      } catch (const std::exception&) {
        ok = false;
      }
    }
    if (!ok) {
      Issue(field, "must be true or false", "write " + field.substr(field.rfind('.') + 1) + ": true");
      return false;
    }
    *out = value;
    return true;
  }

  void ReadEnv(const YAML::Node& node, const std::string& field, std::map<std::string, std::string>* env) {
    if (!node.IsMap()) {
      Issue(field, "must map variable names to values", "e.g. env: {OMP_NUM_THREADS: \"1\"}");
      return;
    }
    static const std::regex kVar("[A-Za-z_][A-Za-z0-9_]*");
    for (auto it = node.begin(); it != node.end(); ++it) {
      std::string name = it->first.IsScalar() ? it->first.Scalar() : "";
      if (!std::regex_match(name, kVar)) {
        Issue(field + "." + name, "'" + name + "' is not a valid environment variable name",
              "use letters, digits and '_', not starting with a digit");
        continue;
      }
      // A copy: it->second lives in a proxy that dies at the end of this statement.
      const YAML::Node value = it->second;
      // {secret: VALUE}: a value Shoal masks wherever it shows the spec or the task's output.
      if (value.IsMap() && value.size() == 1 && value["secret"] && value["secret"].IsScalar()) {
        if (value["secret"].Scalar() == kSecretMask) {
          Issue(field + "." + name, std::string("holds ") + kSecretMask + ", the mask Shoal shows in place of a secret's value",
                "give the value itself: --set " + field + "." + name + ".secret:=VALUE, or {secret: VALUE} in the file");
        }
        (*env)[name] = value["secret"].Scalar();
        secrets_.insert(name);
        continue;
      }
      if (!value.IsScalar()) {
        Issue(field + "." + name, "must be a single value, or {secret: VALUE} for a secret",
              "quote it: " + name + ": \"value\", or " + name + ": {secret: \"value\"}");
        continue;
      }
      (*env)[name] = value.Scalar();
    }
  }

  void ReadDuration(const YAML::Node& n, const std::string& field, int64_t* out, bool zero_ok) {
    if (!n.IsScalar()) {
      Issue(field, "must be a duration", "write e.g. 30s, 5m or 2h");
      return;
    }
    auto parsed = ParseDuration(n.Scalar());
    if (!parsed.ok()) {
      Issue(field, parsed.status().message(), "");
    } else if (*parsed == 0 && !zero_ok) {
      Issue(field, "must be longer than zero", "write e.g. 30s");
    } else {
      *out = *parsed;
    }
  }

  // queue, priority and estimate: where the job waits and in what order.
  void ReadPlace(const YAML::Node& root, JobSpec* spec) {
    if (auto n = root["queue"]) {
      ReadString(n, "queue", &spec->queue);
      if (spec->queue.empty() || spec->queue.size() > 32 ||
          spec->queue.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") != std::string::npos) {
        Issue("queue", "'" + spec->queue + "' is not a queue name", "queue names are 1 to 32 of a-z, 0-9, _ and -; shoal queues lists them");
      }
    }
    if (auto n = root["priority"]) {
      static const std::map<std::string, int> kNamed = {{"low", kLowPriority}, {"normal", 0}, {"high", kHighPriority}};
      std::string text = n.IsScalar() ? n.Scalar() : "";
      char* end = nullptr;
      long value = std::strtol(text.c_str(), &end, 10);
      if (auto named = kNamed.find(text); named != kNamed.end()) {
        spec->priority = named->second;
      } else if (text.empty() || *end != '\0' || value < kMinJobPriority || value > kMaxJobPriority) {
        Issue("priority", "must be low, normal, high or a whole number from " + std::to_string(kMinJobPriority) + " to " +
                              std::to_string(kMaxJobPriority) + " (got '" + text + "')",
              "e.g. priority: high (100) or priority: -10");
      } else {
        spec->priority = static_cast<int>(value);
      }
    }
    if (auto n = root["estimate"]) ReadDuration(n, "estimate", &spec->estimate_ms, false);
    if (auto n = root["preemption_grace"]) {
      ReadDuration(n, "preemption_grace", &spec->preemption_grace_ms, true);
      if (spec->preemption_grace_ms > kMaxPreemptionGraceMs) {
        Issue("preemption_grace", "must be at most 1h (got " + n.Scalar() + ")",
              "give the program the time it needs to write a checkpoint, e.g. preemption_grace: 2m");
      }
    }
  }

  // image: a name in the server's podman storage (docs/isolation.md), for the job or one role.
  std::optional<ImageSpec> ReadImage(const YAML::Node& node, const std::string& field) {
    std::string name;
    if (!ReadString(node, field, &name)) return std::nullopt;
    const char* example = "e.g. image: localhost/train-env:1 or docker.io/library/debian:bookworm";
    if (name.empty() || name.size() > 255) {
      Issue(field, "must be an image name of 1 to 255 characters", example);
      return std::nullopt;
    }
    for (char c : name) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && std::string_view("._-/:@").find(c) == std::string_view::npos) {
        Issue(field, "'" + name + "' is not an image name: it may hold letters, digits and . _ - / : @ only", example);
        return std::nullopt;
      }
    }
    if (!std::isalnum(static_cast<unsigned char>(name.front()))) {
      Issue(field, "'" + name + "' is not an image name: it must start with a letter or digit", example);
      return std::nullopt;
    }
    return ImageSpec{name, "", ""};
  }

  // checkpoint: {path, uri, keep}, for the job or one role.
  std::optional<CheckpointSpec> ReadCheckpoint(const YAML::Node& node, const std::string& field) {
    if (!node.IsMap()) {
      Issue(field, "must be a mapping with path, uri and keep", "e.g. checkpoint: {path: ckpt/, uri: s3://bucket/ckpt, keep: 3}");
      return std::nullopt;
    }
    CheckKnownFields(node, field, kCheckpointFields);
    CheckpointSpec checkpoint;
    bool ok = true;
    if (!node["uri"]) {
      Issue(field + ".uri", "is missing", "give where checkpoints are kept: a path, file:// or s3://bucket/key");
      ok = false;
    } else if (!ReadStorageUri(node["uri"], field + ".uri", &checkpoint.uri)) {
      ok = false;
    } else if (HasGlobCharacter(checkpoint.uri)) {
      Issue(field + ".uri", "a checkpoint URI cannot hold glob characters", "name one folder");
      ok = false;
    }
    if (auto n = node["path"]) ReadString(n, field + ".path", &checkpoint.path);
    while (checkpoint.path.size() > 1 && checkpoint.path.ends_with('/')) checkpoint.path.pop_back();
    CheckTaskFolder(field + ".path", checkpoint.path);
    if (auto n = node["keep"]) {
      if (ReadInt(n, field + ".keep", &checkpoint.keep) && (checkpoint.keep < 1 || checkpoint.keep > 1000)) {
        Issue(field + ".keep", "must be between 1 and 1000 (got " + std::to_string(checkpoint.keep) + ")",
              "keep at least the newest checkpoint, e.g. keep: 3");
        ok = false;
      }
    }
    if (!ok) return std::nullopt;
    return checkpoint;
  }

  // A checkpoint folder in storage must not be an output's, nor inside one (an output's
  // commit would delete the checkpoints, and the other way round).
  void CheckCheckpointsApart(const JobSpec& spec) {
    auto check = [&](const std::string& field, const CheckpointSpec& checkpoint) {
      for (size_t j = 0; j < spec.outputs.size(); ++j) {
        if (!UrisOverlap(checkpoint.uri, spec.outputs[j].uri)) continue;
        Issue(field + ".uri", "'" + checkpoint.uri + "' overlaps outputs[" + std::to_string(j) + "]'s '" +
                                  spec.outputs[j].uri + "': an output's commit replaces what is in its folder",
              "keep checkpoints in a folder of their own, outside every output's");
      }
    };
    if (spec.checkpoint) check("checkpoint", *spec.checkpoint);
    for (const auto& role : spec.roles) {
      if (role.checkpoint) check("roles." + role.name + ".checkpoint", *role.checkpoint);
    }
  }

  void ReadSlurm(const YAML::Node& node, SlurmSection* slurm) {
    if (!node.IsMap()) {
      Issue("slurm", "must be a mapping", "e.g. slurm: {partition: gpu, account: ml, time: 2h}");
      return;
    }
    CheckKnownFields(node, "slurm", kSlurmFields);
    for (auto [key, out] : {std::pair{"partition", &slurm->partition}, {"account", &slurm->account}, {"qos", &slurm->qos},
                            {"constraint", &slurm->constraint}, {"reservation", &slurm->reservation}}) {
      if (auto n = node[key]) ReadString(n, std::string("slurm.") + key, out);
    }
    if (auto n = node["time"]) ReadDuration(n, "slurm.time", &slurm->time_ms, false);
    if (auto n = node["extra"]) {
      if (!n.IsSequence()) {
        Issue("slurm.extra", "must be a list of sbatch options", "e.g. extra: [--mail-type=END, --exclusive]");
      } else {
        for (size_t i = 0; i < n.size(); ++i) {
          std::string option;
          if (ReadString(n[i], "slurm.extra[" + std::to_string(i) + "]", &option)) slurm->extra.push_back(option);
        }
      }
    }
    for (const SpecIssue& issue : CheckSlurmSection(*slurm)) Issue(issue.field, issue.problem, issue.fix);
  }

  void ReadTimeouts(const YAML::Node& node, Timeouts* timeouts) {
    if (!node.IsMap()) {
      Issue("timeouts", "must be a mapping", "e.g. timeouts: {heartbeat: 30s, register: 2m, job: 1h}");
      return;
    }
    CheckKnownFields(node, "timeouts", kTimeoutFields);
    auto read = [&](const char* key, int64_t* out, bool zero_ok) {
      if (auto n = node[key]) ReadDuration(n, std::string("timeouts.") + key, out, zero_ok);
    };
    read("heartbeat", &timeouts->heartbeat_ms, false);
    if (timeouts->heartbeat_ms < kMinHeartbeatTimeoutMs) {
      Issue("timeouts.heartbeat", "is shorter than two heartbeats (tasks send one every second), so every task would be lost",
            "write 2s or more, e.g. 30s");
    }
    read("register", &timeouts->register_ms, false);
    read("job", &timeouts->job_ms, true);
    read("hang", &timeouts->hang_ms, true);
    if (auto n = node["on_hang"]) {
      if (n.IsScalar() && (n.Scalar() == "flag" || n.Scalar() == "fail")) {
        timeouts->hang_fails = n.Scalar() == "fail";
      } else {
        Issue("timeouts.on_hang", "must be flag or fail",
              "flag shows the hang in status and the UI; fail also fails the task (and the job retries if max_attempts allows)");
      }
    }
  }

  RoleSpec ReadRole(const std::string& framework, const std::string& name, const YAML::Node& node) {
    RoleSpec role;
    role.name = name;
    role.service = DefaultService(framework, name);
    std::string prefix = "roles." + name;
    static const std::regex kRoleName("[A-Za-z][A-Za-z0-9_-]{0,63}");
    if (!std::regex_match(name, kRoleName)) {
      Issue(prefix, "'" + name + "' is not a valid role name",
            "use letters, digits, '_' and '-', starting with a letter, e.g. worker or ps");
    } else if (name == kAmLogRole) {
      Issue(prefix, "'" + name + "' is reserved: it names the application master's log (shoal logs JOB --role am)",
            "give the role another name, e.g. worker");
    }
    if (!node.IsMap()) {
      Issue(prefix, "must be a mapping of the role's settings", "e.g. " + name + ": {instances: 2, command: ...}");
      return role;
    }
    CheckKnownFields(node, prefix, kRoleFields);
    if (auto n = node["instances"]) {
      if (ReadInt(n, prefix + ".instances", &role.instances) && (role.instances < 1 || role.instances > 10000)) {
        Issue(prefix + ".instances", "must be between 1 and 10000 (got " + std::to_string(role.instances) + ")",
              "set how many tasks of this role to start, e.g. instances: 2");
      }
    }
    if (auto n = node["cpus"]) {
      if (ReadNumber(n, prefix + ".cpus", &role.resources.cpus, "a number") &&
          (role.resources.cpus <= 0 || role.resources.cpus > 100000)) {
        Issue(prefix + ".cpus", "must be more than 0 (got " + n.Scalar() + ")", "e.g. cpus: 1 or cpus: 0.5");
      }
    }
    if (auto n = node["memory"]) {
      auto memory = n.IsScalar() ? ParseMemory(n.Scalar()) : Result<int64_t>(InvalidArgument("must be a size"));
      if (!memory.ok()) {
        Issue(prefix + ".memory", memory.status().message(), "e.g. memory: 512M or memory: 4G");
      } else if (*memory < kMinTaskMemoryBytes) {
        Issue(prefix + ".memory", "'" + n.Scalar() + "' is less than the " + std::to_string(kMinTaskMemoryBytes >> 20) +
                                      "M a task needs to start (Shoal's agent and the shell that starts the program)",
              "give each task at least " + std::to_string(kMinTaskMemoryBytes >> 20) + "M, e.g. memory: 512M");
      } else {
        role.resources.memory_bytes = *memory;
      }
    }
    if (auto n = node["gpus"]) {
      if (ReadInt(n, prefix + ".gpus", &role.resources.gpus) && (role.resources.gpus < 0 || role.resources.gpus > 1024)) {
        Issue(prefix + ".gpus", "must be 0 or more (got " + n.Scalar() + ")", "e.g. gpus: 1");
      }
    }
    if (auto n = node["command"]) {
      if (n.IsSequence()) {
        for (const auto& arg : n) {
          if (!arg.IsScalar()) {
            Issue(prefix + ".command", "a command list must hold only text", "e.g. command: [python3, train.py]");
            break;
          }
          role.command += (role.command.empty() ? "" : " ") + ShellQuote(arg.Scalar());
        }
      } else {
        ReadString(n, prefix + ".command", &role.command);
      }
    }
    if (role.command.find_first_not_of(" \t\n") == std::string::npos) {
      Issue(prefix + ".command", "is missing or empty", "give the program each task runs, e.g. command: python3 train.py");
    }
    if (auto n = node["env"]) ReadEnv(n, prefix + ".env", &role.env);
    if (auto n = node["service"]) ReadBool(n, prefix + ".service", &role.service);
    if (auto n = node["tolerate_failure"]) ReadBool(n, prefix + ".tolerate_failure", &role.tolerate_failure);
    if (auto n = node["nproc_per_node"]) {
      if (ReadInt(n, prefix + ".nproc_per_node", &role.nproc_per_node) &&
          (role.nproc_per_node < 1 || role.nproc_per_node > 256)) {
        Issue(prefix + ".nproc_per_node", "must be between 1 and 256 (got " + n.Scalar() + ")",
              "set how many processes each task runs, e.g. nproc_per_node: 2");
      }
    }
    if (auto n = node["checkpoint"]) role.checkpoint = ReadCheckpoint(n, prefix + ".checkpoint");
    if (auto n = node["image"]) role.image = ReadImage(n, prefix + ".image");
    return role;
  }

  const ParseOptions& options_;
  SourceMap& sources_;
  std::vector<SpecIssue>& issues_;
  std::set<std::string> secrets_;  // env names given as {secret: VALUE}
  std::map<std::string, std::pair<std::string, std::string>> shipped_names_;  // name -> field, what
};

// Applies "a.b.c=value" to the document; the value is read as YAML ("3" is a number).
Status ApplyOverride(YAML::Node& root, const std::string& assignment, SourceMap& sources,
                     const std::map<std::string, std::string>& flag_names) {
  size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    return InvalidArgument("'" + assignment + "' is not a field assignment; write path=value, e.g. roles.worker.instances=4");
  }
  if (eq == 1 && assignment[0] == ':') {
    return InvalidArgument("'" + assignment + "' is not a field assignment; write path:=text, e.g. name:=my-job");
  }
  // "path:=value" takes the value as text; "path=value" reads it as YAML.
  bool literal = assignment[eq - 1] == ':';
  std::string path = assignment.substr(0, literal ? eq - 1 : eq);
  std::string text = assignment.substr(eq + 1);
  std::vector<std::string> keys;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    keys.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  for (const auto& key : keys) {
    if (key.empty()) return InvalidArgument("'" + path + "' is not a field path; write e.g. roles.worker.instances");
  }
  YAML::Node value(text);
  if (!literal) {
    try {
      value = YAML::Load(text);
      if (!value.IsDefined() || value.IsNull()) value = YAML::Node(text);
    } catch (const std::exception&) {
      value = YAML::Node(text);
    }
  }
  if (!root.IsMap()) root = YAML::Node(YAML::NodeType::Map);
  YAML::Node node;
  node.reset(root);
  for (size_t i = 0; i + 1 < keys.size(); ++i) {
    YAML::Node child = node[keys[i]];
    if (!child.IsMap()) {
      node[keys[i]] = YAML::Node(YAML::NodeType::Map);
      child = node[keys[i]];
    }
    node.reset(child);
  }
  node[keys.back()] = value;
  auto typed = flag_names.find(path);
  sources.MarkFromFlag(path, typed == flag_names.end() ? "" : typed->second);
  return Status::Ok();
}

// Roles given as a list of mappings, each with its name ({name: worker, instances: 2, ...}:
// the form the API's spec documents use, since JSON objects have no order), become the
// mapping form, in their order, before overrides apply and the reader reads them.
Status RolesListToMap(YAML::Node& root, const std::string& source_name) {
  const YAML::Node& document = root;
  if (!document.IsMap() || !document["roles"] || !document["roles"].IsSequence()) return Status::Ok();
  const YAML::Node list = document["roles"];
  YAML::Node roles(YAML::NodeType::Map);
  std::vector<SpecIssue> issues;
  SourceMap sources(source_name);
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string field = "roles[" + std::to_string(i) + "]";
    YAML::Node entry = list[i];
    sources.SetLine(field, entry.Mark().line + 1);
    sources.SetLine(field + ".name", entry.Mark().line + 1);
    if (!entry.IsMap() || !entry["name"] || !entry["name"].IsScalar() || entry["name"].Scalar().empty()) {
      issues.push_back({field + ".name", "a role in a list needs its name",
                        "write - {name: worker, instances: 2, command: ...}, or map names to roles: roles: {worker: {...}}"});
      continue;
    }
    const std::string name = entry["name"].Scalar();
    if (static_cast<const YAML::Node&>(roles)[name]) {
      issues.push_back({field + ".name", "'" + name + "' is given twice", "give each role its own name"});
      continue;
    }
    entry.remove("name");
    roles[name] = entry;
  }
  if (!issues.empty()) return FormatIssues(issues, sources);
  root["roles"] = roles;
  return Status::Ok();
}

// Notes where a document starts and where its first content (not a bare null) is.
class DocumentProbe final : public YAML::EventHandler {
 public:
  size_t start = 0;
  int content_line = 0;  // 1-based; 0: the document holds nothing

  void OnDocumentStart(const YAML::Mark& mark) override { start = static_cast<size_t>(mark.pos); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { Content(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string&) override { Content(mark); }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    Content(mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    Content(mark);
  }
  void OnMapEnd() override {}

 private:
  void Content(const YAML::Mark& mark) {
    if (content_line == 0) content_line = mark.line + 1;
  }
};

// The line where a second document with content starts, or 0 (a trailing '---' holds
// none). Documents are walked one at a time, two at most: yaml-cpp's LoadAll can yield
// the same empty document for ever on a line it cannot read (fuzz_job_spec found one).
int SecondDocumentLine(const std::string& text) {
  std::istringstream stream(text);
  YAML::Parser parser(stream);
  DocumentProbe first, second;
  if (!parser.HandleNextDocument(first) || !parser.HandleNextDocument(second)) return 0;
  return second.start > first.start ? second.content_line : 0;
}

// The 1-based line of text[at].
int LineOf(const std::string& text, size_t at) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
}

}  // namespace

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

Result<ParsedSpec> ParseJobSpec(const std::string& text, const ParseOptions& options) {
  ParsedSpec parsed{JobSpec{}, SourceMap(options.source_name)};
  if (text.size() > kMaxSpecBytes) return InvalidArgument(options.source_name + ": the spec is larger than 8 MiB");
  if (size_t nul = text.find('\0'); nul != std::string::npos) {
    return InvalidArgument(options.source_name + ":" + std::to_string(LineOf(text, nul)) +
                           ": holds a NUL byte, which no command, variable or path can carry; fix: remove it "
                           "(a spec is text; a program that needs a NUL must make it itself)");
  }
  YAML::Node root;
  try {
    root = YAML::Load(text);
    if (int line = SecondDocumentLine(text); line > 0) {
      return InvalidArgument(options.source_name + ":" + std::to_string(line) +
                             ": a second YAML document starts here, and a spec file describes one job; fix: "
                             "remove the '---' and what follows, or put each job in a file of its own");
    }
  } catch (const YAML::DeepRecursion& e) {  // yaml-cpp words it "bad file"
    return InvalidArgument(options.source_name + ":" + std::to_string(e.mark.line + 1) +
                           ": not valid YAML: nested deeper than a spec may be (" + std::to_string(e.depth()) +
                           " levels); fix: a job spec needs a few levels, so look for brackets left open");
  } catch (const YAML::Exception& e) {
    std::string where = options.source_name + ":" + std::to_string(e.mark.line + 1);
    return InvalidArgument(where + ": not valid YAML: " + e.msg + "; fix the syntax at that line");
  } catch (const std::exception& e) {
    return InvalidArgument(options.source_name + ": not valid YAML: " + e.what());
  }
  if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  RETURN_IF_ERROR(RolesListToMap(root, options.source_name));
  for (const auto& assignment : options.overrides) {
    RETURN_IF_ERROR(ApplyOverride(root, assignment, parsed.sources, options.flag_names));
  }
  std::vector<SpecIssue> issues;
  try {
    SpecReader reader(options, parsed.sources, issues);
    parsed.spec = reader.Read(root);
  } catch (const std::exception& e) {
    return InvalidArgument(options.source_name + ": cannot read the spec: " + e.what());
  }
  RETURN_IF_ERROR(FormatIssues(issues, parsed.sources));
  return parsed;
}

}  // namespace shoal
