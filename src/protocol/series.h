// Time series of one task, as agents send them to the AM and the AM reports them (docs/api.md, "series" in a report):
// resource samples taken by the container (CPU, memory, progress, GPU) and the points of
// the metrics the program prints (`reporter metric: loss=0.31 step=120`).
//
// Contract:
//  - ParseSeries validates the whole "series" array before anything is kept: every
//    problem is InvalidArgument naming the task and the field; nothing partial.
//  - t is Unix milliseconds; cpu is percent of one core (>= 0); rss and gpu_mem bytes
//    (>= 0); progress 0..1; gpu_util percent; step a whole number; value finite.
//  - Metric names are 1..128 characters of any text: the UI shows them as text.
//  - ToJson writes the shape GET /api/v1/jobs/ID/series returns.
// Thread-safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/status.h"

namespace shoal {

struct ResourceSample {
  int64_t t = 0;
  double cpu = 0;
  int64_t rss = 0;
  double progress = 0;
  std::optional<double> gpu_util;
  std::optional<double> gpu_mem;
  std::optional<int64_t> rss_peak;  // the most the task has held (a confined task's cgroup says)
};

struct MetricPoint {
  int64_t t = 0;
  std::optional<int64_t> step;
  std::string name;
  double value = 0;
};

struct TaskSeries {
  std::string role;
  int index = 0;
  std::vector<ResourceSample> samples;
  std::vector<MetricPoint> metrics;
};

// One resource sample or metric point; `where` names it in errors ("heartbeat.sample").
Result<ResourceSample> DecodeSample(const Json& json, const std::string& where);
Result<MetricPoint> DecodeMetricPoint(const Json& json, const std::string& where);

// Parses a report's "series" value (absent: call not needed; null or [] gives nothing).
Result<std::vector<TaskSeries>> ParseSeries(const Json& series);

Json ToJson(const ResourceSample& sample);
Json ToJson(const MetricPoint& point);
Json ToJson(const TaskSeries& task);

}  // namespace shoal
