// Log: one-line diagnostics of Shoal's daemons (server, AM, container) on stderr,
// which their launcher sends to a log file.
// Thread-safety: a line is written with one write(2), so lines never interleave.
#pragma once

#include <cstdint>
#include <string>

namespace shoal {

// Sets the component name printed on every line ("server", "am", "container").
void SetLogComponent(const std::string& component);
// "2026-11-29 14:40:00.123 am: message"
void LogInfo(const std::string& message);
void LogError(const std::string& message);
// Local time as the log lines print it: "2026-11-29 14:40:00.123".
std::string FormatLocalTime(int64_t wall_millis);

}  // namespace shoal
