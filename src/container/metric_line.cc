#include "container/metric_line.h"

#include <cctype>
#include <charconv>
#include <cmath>

namespace shoal {
namespace {

bool ValidName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  if (!std::isalpha(static_cast<unsigned char>(name[0])) && name[0] != '_') return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '/' && c != '-') return false;
  }
  return true;
}

}  // namespace

std::optional<MetricLine> ParseMetricLine(std::string_view line) {
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.front()))) line.remove_prefix(1);
  constexpr std::string_view kPrefix = "reporter metric:";
  if (!line.starts_with(kPrefix)) return std::nullopt;
  line.remove_prefix(kPrefix.size());
  MetricLine parsed;
  while (true) {
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.front()))) line.remove_prefix(1);
    if (line.empty()) break;
    size_t end = 0;
    while (end < line.size() && !std::isspace(static_cast<unsigned char>(line[end]))) ++end;
    std::string_view pair = line.substr(0, end);
    line.remove_prefix(end);
    size_t eq = pair.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    std::string_view name = pair.substr(0, eq), text = pair.substr(eq + 1);
    if (!ValidName(name) || text.empty()) return std::nullopt;
    double value = 0;
    auto [ptr, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || ptr != text.data() + text.size() || !std::isfinite(value)) return std::nullopt;
    if (name == "step") {
      if (value < 0 || value != std::floor(value) || value > 9.0e15 || parsed.step) return std::nullopt;
      parsed.step = static_cast<int64_t>(value);
      continue;
    }
    if (parsed.values.size() >= 32) return std::nullopt;
    parsed.values.emplace_back(std::string(name), value);
  }
  if (parsed.values.empty()) return std::nullopt;
  return parsed;
}

}  // namespace shoal
