// Fuzzes the progress-line parser and the output capture's line splitting: any bytes
// written by a program must give progress values in [0, 1] and lines no longer than the cap.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "container/output_capture.h"
#include "container/progress_line.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  if (auto value = shoal::ParseProgressLine(text); value && (*value < 0 || *value > 1)) std::abort();
  if (size > 60000) return 0;  // the pipe below must hold it all
  int out[2], err[2];
  if (pipe(out) != 0 || pipe(err) != 0) return 0;
  close(out[1]);
  {
    shoal::OutputCapture capture(out[0], err[0], -1, [](std::string_view line) {
      if (line.size() > shoal::OutputCapture::kMaxLine) std::abort();
      if (auto value = shoal::ParseProgressLine(line); value && (*value < 0 || *value > 1)) std::abort();
    });
    if (write(err[1], data, size) != static_cast<ssize_t>(size)) std::abort();
    close(err[1]);
    while (capture.open()) (void)capture.Pump(10);
    capture.Drain();
  }
  return 0;
}
