// Units: parsing and printing of the sizes and durations users write in job specs.
//
// Contract:
//  - ParseMemory accepts a whole number of bytes or a number with a binary suffix
//    K, M, G, T (optionally followed by "i" and/or "B", case-insensitive): "512M",
//    "4G", "1.5Gi", "1048576". The result is bytes; it must be > 0.
//  - ParseDuration accepts seconds as a number or a number with one suffix
//    ms, s, m, h: "30s", "5m", "1.5h", "250ms", "10". The result is milliseconds >= 0.
//  - Errors are InvalidArgument with a sentence that shows an accepted form.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace shoal {

Result<int64_t> ParseMemory(std::string_view text);
Result<int64_t> ParseDuration(std::string_view text);

// "512M", "4G", "1.5G": the shortest form that ParseMemory reads back to a close value.
std::string FormatMemory(int64_t bytes);
// "850ms", "12.3s", "4m05s", "2h03m".
std::string FormatDuration(int64_t millis);

}  // namespace shoal
