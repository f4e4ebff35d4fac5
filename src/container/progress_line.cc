#include "container/progress_line.h"

#include <cctype>
#include <charconv>
#include <cmath>

namespace shoal {

std::optional<double> ParseProgressLine(std::string_view line) {
  auto trim = [](std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
  };
  line = trim(line);
  constexpr std::string_view kPrefix = "reporter progress:";
  if (!line.starts_with(kPrefix)) return std::nullopt;
  std::string_view number = trim(line.substr(kPrefix.size()));
  if (number.empty()) return std::nullopt;
  double value = 0;
  auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (error != std::errc() || end != number.data() + number.size()) return std::nullopt;
  if (!std::isfinite(value) || value < 0 || value > 1) return std::nullopt;
  return value;
}

}  // namespace shoal
