// Metric lines: a program prints `reporter metric: loss=0.31 accuracy=0.87 step=120` on
// stderr to chart its metrics in the web UI (docs/environment.md).
//
// Contract: after the prefix come space-separated name=value pairs; names are
// [A-Za-z_][A-Za-z0-9_./-]* (at most 64 characters), values finite numbers. `step`, when
// present, must be a whole number >= 0 and is the x-axis of every value on the line.
// At most 32 pairs a line. Anything else returns nullopt: the line is just a log line.
// Thread-safety: pure function.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace shoal {

struct MetricLine {
  std::optional<int64_t> step;
  std::vector<std::pair<std::string, double>> values;
};

std::optional<MetricLine> ParseMetricLine(std::string_view line);

}  // namespace shoal
