// Fuzzes the progress-line and metric-line parsers and the output capture's line
// splitting: any bytes written by a program must give progress values in [0, 1], metric
// points with valid names and finite values, and lines no longer than the cap.
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "container/metric_line.h"
#include "container/output_capture.h"
#include "container/progress_line.h"

namespace {

void CheckLine(std::string_view line) {
  if (auto value = shoal::ParseProgressLine(line); value && (*value < 0 || *value > 1)) std::abort();
  if (auto metric = shoal::ParseMetricLine(line)) {
    if (metric->values.empty() || metric->values.size() > 32 || (metric->step && *metric->step < 0)) std::abort();
    for (const auto& [name, value] : metric->values) {
      if (name.empty() || name.size() > 64 || !std::isfinite(value)) std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  CheckLine(text);
  if (size > 60000) return 0;  // the pipe below must hold it all
  int out[2], err[2];
  if (pipe(out) != 0 || pipe(err) != 0) return 0;
  close(out[1]);
  {
    shoal::OutputCapture capture(out[0], err[0], -1, [](std::string_view line) {
      if (line.size() > shoal::OutputCapture::kMaxLine) std::abort();
      CheckLine(line);
    });
    if (write(err[1], data, size) != static_cast<ssize_t>(size)) std::abort();
    close(err[1]);
    while (capture.open()) (void)capture.Pump(10);
    capture.Drain();
  }
  return 0;
}
