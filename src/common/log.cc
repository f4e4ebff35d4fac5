#include "common/log.h"

#include <sys/time.h>
#include <unistd.h>

#include <ctime>
#include <mutex>

namespace shoal {
namespace {

std::string& Component() {
  static std::string component = "shoal";
  return component;
}

void Write(const char* level, const std::string& message) {
  timeval tv;
  gettimeofday(&tv, nullptr);
  std::string stamp = FormatLocalTime(int64_t{tv.tv_sec} * 1000 + tv.tv_usec / 1000);
  std::string line = stamp + " " + Component() + level + ": " + message + "\n";
  ssize_t ignored = write(2, line.data(), line.size());
  (void)ignored;
}

}  // namespace

std::string FormatLocalTime(int64_t wall_millis) {
  time_t seconds = static_cast<time_t>(wall_millis / 1000);
  tm local;
  localtime_r(&seconds, &local);
  char stamp[48];
  size_t n = strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &local);
  snprintf(stamp + n, sizeof stamp - n, ".%03d", static_cast<int>(wall_millis % 1000));
  return stamp;
}

void SetLogComponent(const std::string& component) { Component() = component; }
void LogInfo(const std::string& message) { Write("", message); }
void LogError(const std::string& message) { Write(" ERROR", message); }

}  // namespace shoal
