// OutputCapture: moves a user program's stdout and stderr into its task's log file, and
// hands every complete stderr line to a callback (progress and, later, metrics).
//
// Contract:
//  - Pump() waits up to timeout_ms for output and copies whatever is ready; it never
//    blocks on the program beyond that, so the program never waits on Shoal for long.
//  - Memory is bounded: a line longer than kMaxLine is cut into pieces of kMaxLine.
//  - Output goes to the log as it arrives, stdout and stderr interleaved as read.
//  - open() reports whether any pipe is still open; Drain() reads what is left without
//    waiting for writers that never close (a background process holding the pipe).
// Thread-safety: one thread.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace shoal {

class OutputCapture {
 public:
  static constexpr size_t kMaxLine = 64 * 1024;
  using LineCallback = std::function<void(std::string_view line)>;

  // Takes ownership of both read ends; log_fd is borrowed.
  OutputCapture(int stdout_fd, int stderr_fd, int log_fd, LineCallback on_stderr_line);
  ~OutputCapture();
  OutputCapture(const OutputCapture&) = delete;
  OutputCapture& operator=(const OutputCapture&) = delete;

  // Copies available output; waits at most timeout_ms for some.
  Status Pump(int timeout_ms);
  void Drain();
  bool open() const { return fds_[0] >= 0 || fds_[1] >= 0; }

 private:
  void Consume(int which, const char* data, size_t size);

  int fds_[2];
  int log_fd_;
  LineCallback on_stderr_line_;
  std::string partial_line_;
  bool log_failed_ = false;
};

}  // namespace shoal
