#include "common/units.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>

namespace shoal {
namespace {

// Splits "12.5Gi" into 12.5 and "Gi"; false if there is no leading number.
bool SplitNumber(std::string_view text, double* number, std::string* suffix) {
  size_t i = 0;
  bool digits = false, dot = false;
  while (i < text.size()) {
    char c = text[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      digits = true;
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
    ++i;
  }
  if (!digits) return false;
  *number = std::stod(std::string(text.substr(0, i)));
  *suffix = std::string(text.substr(i));
  for (char& c : *suffix) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return std::isfinite(*number);
}

std::string_view TrimSpaces(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

Result<int64_t> ParseMemory(std::string_view raw) {
  std::string_view text = TrimSpaces(raw);
  double number = 0;
  std::string suffix;
  auto bad = [&] {
    return InvalidArgument("'" + std::string(raw) +
                           "' is not a memory size; write a number with a unit such as 512M, 4G or 1.5G");
  };
  if (text.size() > 32 || !SplitNumber(text, &number, &suffix)) return bad();
  if (!suffix.empty() && suffix.back() == 'b') suffix.pop_back();
  if (!suffix.empty() && suffix.back() == 'i') suffix.pop_back();
  double scale = 1;
  if (suffix.empty()) scale = 1;
  else if (suffix == "k") scale = 1024.0;
  else if (suffix == "m") scale = 1024.0 * 1024;
  else if (suffix == "g") scale = 1024.0 * 1024 * 1024;
  else if (suffix == "t") scale = 1024.0 * 1024 * 1024 * 1024;
  else return bad();
  double bytes = number * scale;
  if (bytes < 1) return InvalidArgument("memory size '" + std::string(raw) + "' must be more than zero");
  if (bytes > 9.0e18) return InvalidArgument("memory size '" + std::string(raw) + "' is too large");
  return static_cast<int64_t>(std::llround(bytes));
}

Result<int64_t> ParseDuration(std::string_view raw) {
  std::string_view text = TrimSpaces(raw);
  double number = 0;
  std::string suffix;
  auto bad = [&] {
    return InvalidArgument("'" + std::string(raw) +
                           "' is not a duration; write a number with a unit such as 30s, 5m, 2h or 250ms");
  };
  if (text.size() > 32 || !SplitNumber(text, &number, &suffix)) return bad();
  double millis;
  if (suffix.empty() || suffix == "s") millis = number * 1000;
  else if (suffix == "ms") millis = number;
  else if (suffix == "m") millis = number * 60'000;
  else if (suffix == "h") millis = number * 3'600'000;
  else return bad();
  if (millis > 3.0e14) return InvalidArgument("duration '" + std::string(raw) + "' is too long");
  return static_cast<int64_t>(std::llround(millis));
}

std::string FormatMemory(int64_t bytes) {
  static const char* kUnits[] = {"", "K", "M", "G", "T"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char buf[32];
  if (std::fabs(value - std::round(value)) < 0.05) std::snprintf(buf, sizeof buf, "%.0f%s", value, kUnits[unit]);
  else std::snprintf(buf, sizeof buf, "%.1f%s", value, kUnits[unit]);
  return buf;
}

std::string FormatDuration(int64_t millis) {
  char buf[32];
  if (millis < 1000) {
    std::snprintf(buf, sizeof buf, "%lldms", static_cast<long long>(millis));
  } else if (millis < 60'000) {
    std::snprintf(buf, sizeof buf, "%.1fs", millis / 1000.0);
  } else if (millis < 3'600'000) {
    long long s = millis / 1000;
    std::snprintf(buf, sizeof buf, "%lldm%02llds", s / 60, s % 60);
  } else {
    long long m = millis / 60'000;
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", m / 60, m % 60);
  }
  return buf;
}

}  // namespace shoal
