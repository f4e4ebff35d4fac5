#include "scheduling/queue_config.h"

#include <sys/stat.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <regex>

#include "common/files.h"
#include "common/log.h"
#include "common/units.h"

namespace shoal {

namespace {

constexpr double kEpsilon = 1e-9;

bool ValidQueueName(const std::string& name) {
  if (name.empty() || name.size() > 32) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return false;
  }
  return true;
}

// Reads one file; the first problem becomes the error (with its line).
class QueueConfigReader {
 public:
  explicit QueueConfigReader(std::string origin) : origin_(std::move(origin)) {}

  Result<SchedulingConfig> Read(const std::string& text) {
    YAML::Node root;
    try {
      root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
      return Fail(e.mark.line + 1, std::string("is not YAML: ") + e.msg, "fix the syntax there");
    }
    SchedulingConfig config;
    config.queues.clear();
    if (root.IsNull()) return Finish(config, 1);
    if (!root.IsMap()) return Fail(Line(root), "must be a mapping with max_wait and queues", Example());
    for (const auto& entry : root) {
      std::string key = entry.first.Scalar();
      if (key == "max_wait") {
        ASSIGN_OR_RETURN(config.max_wait_ms, Duration(entry.second, key, "1h", /*zero_ok=*/false));
      } else if (key == "max_wait_to_resume") {
        ASSIGN_OR_RETURN(config.max_wait_to_resume_ms, Duration(entry.second, key, "72h", /*zero_ok=*/false));
      } else if (key == "max_preemption_grace") {
        ASSIGN_OR_RETURN(config.max_preemption_grace_ms, Duration(entry.second, key, "10m", /*zero_ok=*/true));
      } else if (key == "service_levels") {
        ASSIGN_OR_RETURN(config.service_levels, ServiceLevels(entry.second));
      } else if (key == "min_run_before_preemption") {
        ASSIGN_OR_RETURN(config.min_run_before_preemption_ms, Duration(entry.second, key, "10m", /*zero_ok=*/true));
      } else if (key == "queues") {
        if (!entry.second.IsMap()) return Fail(Line(entry.second), "queues must map each queue's name to its settings", Example());
        for (const auto& queue : entry.second) {
          Result<QueueSpec> spec = ReadQueue(queue.first, queue.second);
          if (!spec.ok()) return spec.status();
          config.queues.push_back(*spec);
        }
      } else {
        return Fail(Line(entry.first), "has an unknown field `" + key + "`", "the fields are max_wait, max_wait_to_resume, max_preemption_grace, service_levels, min_run_before_preemption and queues");
      }
    }
    return Finish(config, Line(root));
  }

 private:
  static int Line(const YAML::Node& node) { return node.Mark().line >= 0 ? node.Mark().line + 1 : 1; }
  static std::string Example() { return "e.g. queues: {research: {guarantee: 40%, max: 80%}}"; }

  Status Fail(int line, const std::string& problem, const std::string& fix) const {
    return InvalidArgument(origin_ + ":" + std::to_string(line) + ": " + problem + (fix.empty() ? "" : "; " + fix));
  }

  Result<double> Share(const YAML::Node& node, const std::string& what) const {
    std::string text = node.IsScalar() ? node.Scalar() : "";
    char* end = nullptr;
    double percent = text.empty() ? NAN : std::strtod(text.c_str(), &end);
    if (text.empty() || end == text.c_str() || std::string(end) != "%" || !(percent >= 0 && percent <= 100)) {
      return Fail(Line(node), what + " must be a share of the cluster from 0% to 100% (got `" + text + "`)",
                  "e.g. 40%");
    }
    return percent / 100;
  }

  // Only YAML's plain `true` and `false`: yes/no/on/off read as booleans to some tools and
  // as strings to others, so they are refused rather than guessed.
  Result<bool> Flag(const YAML::Node& node, const std::string& what, const std::string& key) const {
    std::string text = node.IsScalar() ? node.Scalar() : "";
    if (text == "true") return true;
    if (text == "false") return false;
    return Fail(Line(node), what + " must be true or false (got `" + text + "`)", "e.g. " + key + ": true");
  }

  Result<Resources> Limit(const YAML::Node& node, const std::string& queue) const {
    std::string what = "queues." + queue + ".user_limit";
    if (!node.IsMap()) return Fail(Line(node), what + " must be a mapping", "e.g. user_limit: {cpus: 8, memory: 32G, gpus: 2}");
    Resources limit;
    for (const auto& entry : node) {
      std::string key = entry.first.Scalar();
      std::string value = entry.second.IsScalar() ? entry.second.Scalar() : "";
      char* end = nullptr;
      if (key == "cpus" || key == "gpus") {
        double number = std::strtod(value.c_str(), &end);
        bool whole = key == "cpus" || number == std::floor(number);
        if (value.empty() || *end != '\0' || !(number > 0) || !whole || number > 1e6) {
          return Fail(Line(entry.second), what + "." + key + " must be a " + (key == "gpus" ? "whole " : "") + "number above zero",
                      "e.g. " + key + ": 8");
        }
        if (key == "cpus") limit.cpus = number; else limit.gpus = static_cast<int>(number);
      } else if (key == "memory") {
        auto bytes = ParseMemory(value);
        if (!bytes.ok()) return Fail(Line(entry.second), what + ".memory: " + bytes.status().message(), "");
        limit.memory_bytes = *bytes;
      } else {
        return Fail(Line(entry.first), what + " has an unknown field `" + key + "`", "the fields are cpus, memory and gpus");
      }
    }
    return limit;
  }

  // A duration field ("1h", "10m"); `example` is in the fix.
  Result<int64_t> Duration(const YAML::Node& node, const std::string& key, const std::string& example, bool zero_ok) const {
    auto value = node.IsScalar() ? ParseDuration(node.Scalar()) : Result<int64_t>(InvalidArgument(""));
    if (!value.ok() || (!zero_ok && *value <= 0)) {
      return Fail(Line(node), key + " must be a duration" + (zero_ok ? "" : " above zero"), "e.g. " + key + ": " + example);
    }
    return *value;
  }

  // service_levels: [0.1, 0.5, 2]: ascending GPU-hours (CPU-hours for jobs without GPUs),
  // kept as size x milliseconds; [] turns them off.
  Result<std::vector<double>> ServiceLevels(const YAML::Node& node) const {
    const std::string fix = "list ascending GPU-hours, e.g. service_levels: [0.1, 0.5, 2, 8, 32]";
    if (!node.IsSequence()) return Fail(Line(node), "service_levels must be a list of GPU-hours", fix);
    std::vector<double> levels;
    for (const auto& item : node) {
      std::string text = item.IsScalar() ? item.Scalar() : "";
      char* end = nullptr;
      double hours = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0' || !(hours > 0) || hours > 1e6 || (!levels.empty() && hours * 3.6e6 <= levels.back())) {
        return Fail(Line(item), "service_levels must be ascending numbers of GPU-hours above zero (got `" + text + "`)", fix);
      }
      levels.push_back(hours * 3.6e6);
    }
    return levels;
  }

  // slurm: {partition: gpu, qos: high}: what a queue's jobs ask Slurm for.
  Status ReadSlurm(const YAML::Node& node, QueueSpec& queue) const {
    std::string what = "queues." + queue.name + ".slurm";
    if (!node.IsMap()) return Fail(Line(node), what + " must be a mapping", "e.g. slurm: {partition: gpu, qos: high}");
    static const std::regex kSlurmName("[A-Za-z0-9_.-]{1,64}");
    for (const auto& entry : node) {
      std::string key = entry.first.Scalar();
      std::string value = entry.second.IsScalar() ? entry.second.Scalar() : "";
      if (key != "partition" && key != "qos") {
        return Fail(Line(entry.first), what + " has an unknown field `" + key + "`", "the fields are partition and qos");
      }
      if (!std::regex_match(value, kSlurmName)) {
        return Fail(Line(entry.second), what + "." + key + " must be a Slurm name (letters, digits, _ . -)",
                    "e.g. " + key + ": " + (key == "qos" ? "high" : "gpu"));
      }
      (key == "partition" ? queue.slurm_partition : queue.slurm_qos) = value;
    }
    return Status::Ok();
  }

  Result<QueueSpec> ReadQueue(const YAML::Node& name_node, const YAML::Node& node) const {
    QueueSpec queue;
    queue.name = name_node.Scalar();
    if (!ValidQueueName(queue.name)) {
      return Fail(Line(name_node), "queue name `" + queue.name + "` is not 1 to 32 of a-z, 0-9, _ and -", "e.g. research");
    }
    if (!node.IsMap()) return Fail(Line(node), "queues." + queue.name + " must be a mapping", Example());
    bool has_max = false;
    for (const auto& entry : node) {
      std::string key = entry.first.Scalar();
      std::string what = "queues." + queue.name + "." + key;
      if (key == "guarantee") {
        ASSIGN_OR_RETURN(queue.guarantee, Share(entry.second, what));
      } else if (key == "max") {
        ASSIGN_OR_RETURN(queue.max, Share(entry.second, what));
        has_max = true;
      } else if (key == "user_limit") {
        ASSIGN_OR_RETURN(queue.user_limit, Limit(entry.second, queue.name));
      } else if (key == "preempt_lower_priority") {
        ASSIGN_OR_RETURN(queue.preempt_lower_priority, Flag(entry.second, what, key));
      } else if (key == "slurm") {
        RETURN_IF_ERROR(ReadSlurm(entry.second, queue));
      } else {
        return Fail(Line(entry.first), "queues." + queue.name + " has an unknown field `" + key + "`",
                    "the fields are guarantee, max, user_limit, preempt_lower_priority and slurm");
      }
    }
    if (!has_max) queue.max = 1;
    if (queue.max + kEpsilon < queue.guarantee) {
      return Fail(Line(node), "queues." + queue.name + ".max is below its guarantee",
                  "a queue may borrow up to its max, which must be at least its guarantee");
    }
    if (queue.max <= 0) return Fail(Line(node), "queues." + queue.name + ".max is 0%, so it could never run a job", "raise it");
    return queue;
  }

  Result<SchedulingConfig> Finish(SchedulingConfig config, int line) const {
    double sum = 0;
    for (size_t i = 0; i < config.queues.size(); ++i) {
      sum += config.queues[i].guarantee;
      for (size_t j = 0; j < i; ++j) {
        if (config.queues[j].name == config.queues[i].name) {
          return Fail(line, "queue " + config.queues[i].name + " is listed twice", "keep one");
        }
      }
    }
    if (sum > 1 + kEpsilon) {
      char text[32];
      std::snprintf(text, sizeof text, "%g%%", sum * 100);
      return Fail(line, std::string("the queues' guarantees sum to ") + text + ", past 100% of the cluster",
                  "lower them so that they sum to at most 100%");
    }
    if (!config.FindQueue("default")) config.queues.push_back(QueueSpec{"default", std::max(0.0, 1 - sum), 1, {}});
    return config;
  }

  std::string origin_;
};

}  // namespace

SchedulingConfig DefaultSchedulingConfig() {
  SchedulingConfig config;
  config.queues = {QueueSpec{"default", 1, 1, {}}};
  return config;
}

Result<SchedulingConfig> ParseQueueConfig(const std::string& text, const std::string& origin) {
  return QueueConfigReader(origin).Read(text);
}

QueueConfigFile::Stamp QueueConfigFile::Current() const {
  struct stat st{};
  if (::stat(path_.c_str(), &st) != 0) return Stamp{};
  return Stamp{static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec, static_cast<int64_t>(st.st_size)};
}

Result<SchedulingConfig> QueueConfigFile::Read() const {
  if (Current() == Stamp{}) return DefaultSchedulingConfig();
  ASSIGN_OR_RETURN(std::string text, ReadFile(path_));
  return ParseQueueConfig(text, path_);
}

Status QueueConfigFile::Load() {
  stamp_ = Current();
  ASSIGN_OR_RETURN(config_, Read());
  error_.clear();
  return Status::Ok();
}

bool QueueConfigFile::Refresh() {
  Stamp now = Current();
  if (now == stamp_) return false;
  stamp_ = now;
  Result<SchedulingConfig> read = Read();
  if (!read.ok()) {
    if (error_ != read.status().message()) LogError("queues not reloaded, the previous ones stay: " + read.status().message());
    error_ = read.status().message();
    return false;
  }
  LogInfo("queues reloaded from " + path_);
  config_ = *read;
  error_.clear();
  return true;
}

}  // namespace shoal
