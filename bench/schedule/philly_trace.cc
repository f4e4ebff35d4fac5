#include "bench/schedule/philly_trace.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <string_view>
#include <tuple>

namespace shoal::bench {
namespace {

constexpr std::string_view kHeader = "timestamp,duration,num_gpus,gpu_time,cluster";

// Days from 1970-01-01 to the civil date y-m-d (proleptic Gregorian; H. Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t year_of_era = y - era * 400;
  const int64_t day_of_year = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + day_of_era - 719468;
}

// Parses the whole of `text` as a number of type T; false if anything is left over.
template <typename T>
bool ParseNumber(std::string_view text, T& out) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return error == std::errc() && end == text.data() + text.size();
}

std::vector<std::string_view> SplitCommas(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t begin = 0;
  for (size_t comma; (comma = line.find(',', begin)) != std::string_view::npos; begin = comma + 1) {
    fields.push_back(line.substr(begin, comma - begin));
  }
  fields.push_back(line.substr(begin));
  return fields;
}

}  // namespace

Result<int64_t> ParseNaiveTime(const std::string& text) {
  // "YYYY-MM-DD", optionally followed by " HH:MM:SS".
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  std::string_view view = text;
  bool ok = view.size() >= 10 && view[4] == '-' && view[7] == '-' && ParseNumber(view.substr(0, 4), year) &&
            ParseNumber(view.substr(5, 2), month) && ParseNumber(view.substr(8, 2), day);
  if (ok && view.size() > 10) {
    ok = view.size() == 19 && view[10] == ' ' && view[13] == ':' && view[16] == ':' &&
         ParseNumber(view.substr(11, 2), hour) && ParseNumber(view.substr(14, 2), minute) &&
         ParseNumber(view.substr(17, 2), second);
  }
  ok = ok && month >= 1 && month <= 12 && day >= 1 && day <= 31 && hour < 24 && minute < 60 && second < 61;
  if (!ok) return InvalidArgument("'" + text + "' is not a date 'YYYY-MM-DD' or a time 'YYYY-MM-DD HH:MM:SS'");
  return DaysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second;
}

Result<std::vector<TraceRow>> ReadPhillyTrace(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return NotFound("cannot read the trace " + path +
                    ": give the path of philly.csv with --trace (where to get it: docs/benchmarks.md, bench/schedule)");
  }
  std::string line;
  if (!std::getline(in, line) || line != kHeader) {
    return InvalidArgument("the trace " + path + " does not start with the header '" + std::string(kHeader) +
                           "': is it the per-job philly.csv (docs/benchmarks.md, bench/schedule)?");
  }
  std::vector<TraceRow> rows;
  for (int line_number = 2; std::getline(in, line); ++line_number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    auto fields = SplitCommas(line);
    TraceRow row;
    double duration = 0;
    bool ok = fields.size() == 5 && ParseNumber(fields[1], duration) && duration >= 0 &&
              ParseNumber(fields[2], row.num_gpus) && row.num_gpus > 0 && !fields[4].empty();
    Result<int64_t> submit = ok ? ParseNaiveTime(std::string(fields[0])) : Result<int64_t>(InvalidArgument(""));
    if (!submit.ok()) {
      return InvalidArgument(path + " line " + std::to_string(line_number) + " is not 'timestamp,duration,num_gpus," +
                             "gpu_time,cluster' with a time, seconds >= 0 and GPUs > 0: '" + line + "'");
    }
    row.submit_s = *submit;
    row.duration_s = std::llround(duration);
    row.vc = std::string(fields[4]);
    row.row = static_cast<int>(rows.size()) + 1;
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<TraceRow> SliceWeek(const std::vector<TraceRow>& rows, const std::string& vc, int64_t start_s, int days) {
  std::vector<TraceRow> slice;
  for (const TraceRow& row : rows) {
    bool in_window = row.submit_s >= start_s && row.submit_s < start_s + int64_t{days} * 86400;
    if (in_window && (vc.empty() || row.vc == vc)) slice.push_back(row);
  }
  std::sort(slice.begin(), slice.end(), [](const TraceRow& a, const TraceRow& b) {
    return std::tie(a.submit_s, a.row) < std::tie(b.submit_s, b.row);
  });
  if (!slice.empty()) {
    const int64_t first = slice.front().submit_s;
    for (TraceRow& row : slice) row.submit_s -= first;
  }
  return slice;
}

}  // namespace shoal::bench
