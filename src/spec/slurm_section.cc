#include "spec/slurm_section.h"

#include <algorithm>
#include <map>

namespace shoal {
namespace {

struct Field {
  const char* name;
  const char* option;
  std::string SlurmSection::*value;
};

const Field kFields[] = {{"partition", "--partition", &SlurmSection::partition},
                         {"account", "--account", &SlurmSection::account},
                         {"qos", "--qos", &SlurmSection::qos},
                         {"constraint", "--constraint", &SlurmSection::constraint},
                         {"reservation", "--reservation", &SlurmSection::reservation}};

// Options Shoal writes itself, and what a user wanting them should do instead.
const std::map<std::string, std::string>& ShoalsOwnOptions() {
  static const std::map<std::string, std::string> kOwn = {
      {"--job-name", "Shoal names the job shoal-<server>-<job>-<attempt> (docs/slurm.md)"},
      {"--comment", "Shoal's comment tells administrators whose job it is"},
      {"--output", "the AM's output goes to am.log, each task's to its log"},
      {"--error", "the AM's output goes to am.log, each task's to its log"},
      {"--uid", "a root server submits as the job's owner's account (docs/isolation.md)"},
      {"--gid", "a root server submits as the job's owner's account (docs/isolation.md)"},
      {"--signal", "Shoal stops programs itself: SIGTERM, then SIGKILL after the grace"},
      {"--export", "tasks get the environment of the spec (docs/environment.md)"},
      {"--wrap", "the command comes from the spec's roles"},
      {"--nodes", "set each role's instances"},
      {"--ntasks", "set each role's instances"},
      {"--ntasks-per-node", "set each role's instances"},
      {"--cpus-per-task", "set the role's cpus"},
      {"--mem", "set the role's memory"},
      {"--mem-per-cpu", "set the role's memory"},
      {"--gres", "set the role's gpus"},
      {"--gpus", "set the role's gpus"},
      {"--array", "a job array is many jobs; submit each"},
      {"--chdir", "set workdir"},
      {"--hold", "a held job never starts; Shoal queues jobs itself"},
      {"--parsable", "Shoal reads sbatch's answer itself"},
      {"--test-only", "Shoal checks the options at submit itself"},
  };
  return kOwn;
}

bool PrintableWithoutSpaces(const std::string& text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c > ' ' && c < 127; });
}

}  // namespace

bool SlurmSection::empty() const { return Options().empty(); }

std::vector<std::pair<std::string, std::string>> SlurmSection::Options() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Field& field : kFields) {
    const std::string& value = this->*field.value;
    if (!value.empty()) out.emplace_back(std::string("slurm.") + field.name, std::string(field.option) + "=" + value);
  }
  if (time_ms > 0) out.emplace_back("slurm.time", "--time=" + std::to_string((time_ms + 59'999) / 60'000));
  for (size_t i = 0; i < extra.size(); ++i) out.emplace_back("slurm.extra[" + std::to_string(i) + "]", extra[i]);
  return out;
}

std::string SlurmOptionName(const std::string& option) {
  static const std::map<std::string, std::string> kShort = {
      {"-p", "--partition"}, {"-A", "--account"}, {"-q", "--qos"}, {"-t", "--time"}, {"-C", "--constraint"}};
  std::string name = option.substr(0, option.find_first_of("= "));
  if (auto it = kShort.find(name.substr(0, 2)); it != kShort.end() && !name.starts_with("--")) return it->second;
  return name;
}

std::vector<SpecIssue> CheckSlurmSection(const SlurmSection& section) {
  std::vector<SpecIssue> issues;
  for (const Field& field : kFields) {
    const std::string& value = section.*field.value;
    if (!value.empty() && !PrintableWithoutSpaces(value)) {
      issues.push_back({std::string("slurm.") + field.name, "holds a space or a character that is not printable ASCII",
                        "give the name as Slurm knows it (`sinfo`, `sacctmgr show assoc` list them)"});
    }
  }
  for (size_t i = 0; i < section.extra.size(); ++i) {
    const std::string& option = section.extra[i];
    std::string field = "slurm.extra[" + std::to_string(i) + "]";
    if (!option.starts_with("--") || option.size() < 3 || !PrintableWithoutSpaces(option)) {
      issues.push_back({field, "'" + option + "' is not one sbatch long option",
                        "write each as --name or --name=value, without spaces, e.g. --mail-type=END"});
      continue;
    }
    std::string name = SlurmOptionName(option);
    if (auto own = ShoalsOwnOptions().find(name); own != ShoalsOwnOptions().end()) {
      issues.push_back({field, name + " is Shoal's to set", own->second});
      continue;
    }
    for (const Field& known : kFields) {
      if (name == known.option) {
        issues.push_back({field, name + " has a field of its own", std::string("set slurm.") + known.name + " instead"});
      }
    }
    if (name == "--time") issues.push_back({field, "--time has a field of its own", "set slurm.time instead, e.g. 2h"});
  }
  return issues;
}

Json SlurmSectionJson(const SlurmSection& section) {
  Json json = Json::object();
  for (const Field& field : kFields) {
    if (!(section.*field.value).empty()) json[field.name] = section.*field.value;
  }
  if (section.time_ms > 0) json["time_ms"] = section.time_ms;
  if (!section.extra.empty()) json["extra"] = section.extra;
  return json;
}

SlurmSection SlurmSectionFromJson(const Json& json) {
  SlurmSection section;
  if (!json.is_object()) return section;
  for (const Field& field : kFields) section.*field.value = json.value(field.name, "");
  section.time_ms = json.value("time_ms", int64_t{0});
  section.extra = json.value("extra", std::vector<std::string>{});
  return section;
}

}  // namespace shoal
