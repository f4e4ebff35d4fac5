#include "protocol/series.h"

#include <cmath>

namespace shoal {
namespace {

// Reads one numeric field of a sample or point: a finite number within [lo, hi].
Result<double> Number(const Json& object, const char* field, const std::string& where, double lo, double hi) {
  auto it = object.find(field);
  if (it == object.end() || !it->is_number()) {
    return InvalidArgument(where + ": \"" + field + "\" must be a number");
  }
  double value = it->get<double>();
  if (!std::isfinite(value)) return InvalidArgument(where + ": \"" + field + "\" must be a finite number");
  if (value < lo || value > hi) {
    return InvalidArgument(where + ": \"" + field + "\" is " + it->dump() + ", outside " + Json(lo).dump() + " to " +
                           Json(hi).dump());
  }
  return value;
}

// The same for a field that may be absent or null.
Result<std::optional<double>> OptionalNumber(const Json& object, const char* field, const std::string& where, double lo,
                                             double hi) {
  auto it = object.find(field);
  if (it == object.end() || it->is_null()) return std::optional<double>();
  ASSIGN_OR_RETURN(double value, Number(object, field, where, lo, hi));
  return std::optional<double>(value);
}

constexpr double kMaxTime = 4e15;  // Unix ms far beyond any real date, and exact in a double
constexpr double kMaxBytes = 9e18;

}  // namespace

Result<ResourceSample> DecodeSample(const Json& json, const std::string& where) {
  if (!json.is_object()) return InvalidArgument(where + " must be an object");
  ResourceSample s;
  ASSIGN_OR_RETURN(double t, Number(json, "t", where, 0, kMaxTime));
  s.t = static_cast<int64_t>(t);
  ASSIGN_OR_RETURN(s.cpu, Number(json, "cpu", where, 0, 1e6));
  ASSIGN_OR_RETURN(double rss, Number(json, "rss", where, 0, kMaxBytes));
  s.rss = static_cast<int64_t>(rss);
  ASSIGN_OR_RETURN(auto peak, OptionalNumber(json, "rss_peak", where, 0, kMaxBytes));
  if (peak) s.rss_peak = static_cast<int64_t>(*peak);
  ASSIGN_OR_RETURN(auto progress, OptionalNumber(json, "progress", where, 0, 1));
  s.progress = progress.value_or(0);
  ASSIGN_OR_RETURN(s.gpu_util, OptionalNumber(json, "gpu_util", where, 0, 1e4));
  ASSIGN_OR_RETURN(s.gpu_mem, OptionalNumber(json, "gpu_mem", where, 0, kMaxBytes));
  return s;
}

Result<MetricPoint> DecodeMetricPoint(const Json& json, const std::string& where) {
  if (!json.is_object()) return InvalidArgument(where + " must be an object");
  MetricPoint p;
  ASSIGN_OR_RETURN(double t, Number(json, "t", where, 0, kMaxTime));
  p.t = static_cast<int64_t>(t);
  ASSIGN_OR_RETURN(auto step, OptionalNumber(json, "step", where, 0, kMaxTime));
  if (step) {
    if (*step != std::floor(*step)) return InvalidArgument(where + ": \"step\" must be a whole number");
    p.step = static_cast<int64_t>(*step);
  }
  auto name = json.find("name");
  if (name == json.end() || !name->is_string() || name->get<std::string>().empty() ||
      name->get<std::string>().size() > 128) {
    return InvalidArgument(where + ": \"name\" must be a string of 1 to 128 characters");
  }
  p.name = name->get<std::string>();
  ASSIGN_OR_RETURN(p.value, Number(json, "value", where, -HUGE_VAL, HUGE_VAL));
  return p;
}

namespace {

// Parses the array `field` of a task entry with `parse`, naming each element.
template <typename T, typename Parse>
Status ParseList(const Json& task, const char* field, const std::string& where, Parse parse, std::vector<T>& out) {
  auto it = task.find(field);
  if (it == task.end() || it->is_null()) return Status::Ok();
  if (!it->is_array()) return InvalidArgument(where + ": \"" + field + "\" must be an array");
  for (size_t i = 0; i < it->size(); ++i) {
    ASSIGN_OR_RETURN(T item, parse((*it)[i], where + " " + field + "[" + std::to_string(i) + "]"));
    out.push_back(std::move(item));
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<TaskSeries>> ParseSeries(const Json& series) {
  std::vector<TaskSeries> tasks;
  if (series.is_null()) return tasks;
  if (!series.is_array()) return InvalidArgument("\"series\" must be an array of {role, index, samples, metrics}");
  for (size_t i = 0; i < series.size(); ++i) {
    const Json& entry = series[i];
    std::string where = "series[" + std::to_string(i) + "]";
    if (!entry.is_object()) return InvalidArgument(where + " must be an object");
    auto role = entry.find("role");
    auto index = entry.find("index");
    if (role == entry.end() || !role->is_string() || role->get<std::string>().empty()) {
      return InvalidArgument(where + ": \"role\" must be the task's role name");
    }
    if (index == entry.end() || !index->is_number_integer() || index->get<int64_t>() < 0 ||
        index->get<int64_t>() > (1 << 20)) {
      return InvalidArgument(where + ": \"index\" must be the task's index, a whole number >= 0");
    }
    TaskSeries task{role->get<std::string>(), index->get<int>(), {}, {}};
    where = where + " (" + task.role + "[" + std::to_string(task.index) + "])";
    RETURN_IF_ERROR(ParseList(entry, "samples", where, DecodeSample, task.samples));
    RETURN_IF_ERROR(ParseList(entry, "metrics", where, DecodeMetricPoint, task.metrics));
    tasks.push_back(std::move(task));
  }
  return tasks;
}

Json ToJson(const ResourceSample& s) {
  Json out{{"t", s.t},
           {"cpu", s.cpu},
           {"rss", s.rss},
           {"progress", s.progress},
           {"gpu_util", s.gpu_util ? Json(*s.gpu_util) : Json()},
           {"gpu_mem", s.gpu_mem ? Json(*s.gpu_mem) : Json()}};
  if (s.rss_peak) out["rss_peak"] = *s.rss_peak;
  return out;
}

Json ToJson(const MetricPoint& p) {
  return Json{{"t", p.t}, {"step", p.step ? Json(*p.step) : Json()}, {"name", p.name}, {"value", p.value}};
}

Json ToJson(const TaskSeries& task) {
  Json samples = Json::array(), metrics = Json::array();
  for (const auto& s : task.samples) samples.push_back(ToJson(s));
  for (const auto& p : task.metrics) metrics.push_back(ToJson(p));
  return Json{{"role", task.role}, {"index", task.index}, {"samples", std::move(samples)}, {"metrics", std::move(metrics)}};
}

}  // namespace shoal
