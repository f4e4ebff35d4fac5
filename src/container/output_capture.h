// OutputCapture: moves a user program's output (stdout and stderr of one or several
// processes) into its task's log file, and hands every complete line of the streams that
// ask for it to a callback (progress and metric lines).
//
// Contract:
//  - Pump() waits up to timeout_ms for output, or until one of `also_wake_on` is readable
//    (the caller's other events: a program's pidfd, a stop request), and copies whatever
//    output is ready; it never blocks on the program beyond that, so the program never
//    waits on Shoal for long. It reads nothing from `also_wake_on`.
//  - Memory is bounded: a line longer than kMaxLine is cut into pieces of kMaxLine.
//  - A stream without a prefix goes to the log byte for byte, as it arrives; a stream with
//    one (several processes in one task) goes line by line, each line prefixed, so lines
//    of different processes never mix.
//  - open() reports whether any stream is still open; Drain() reads what is left without
//    waiting for writers that never close (a background process holding the pipe).
//  - A log that cannot be written (a full disk) stops the copying, never the program.
//  - Secrets (MaskSecrets): every occurrence of a secret value is replaced by "********"
//    in the log and in the lines handed to the callback. Streams then go line by line, so
//    a secret is never split across two writes; a line cut at kMaxLine may split one.
// Thread-safety: one thread.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace shoal {

struct OutputStream {
  int fd = -1;            // a pipe's read end; owned by the capture from then on
  std::string prefix;     // e.g. "[1] "; empty: copied as is
  bool read_lines = false;  // hand complete lines to the callback
};

class OutputCapture {
 public:
  static constexpr size_t kMaxLine = 64 * 1024;
  using LineCallback = std::function<void(std::string_view line)>;

  // log_fd is borrowed (-1: no log).
  OutputCapture(std::vector<OutputStream> streams, int log_fd, LineCallback on_line);
  // One process: stdout copied, stderr copied and read for lines.
  OutputCapture(int stdout_fd, int stderr_fd, int log_fd, LineCallback on_stderr_line)
      : OutputCapture({{stdout_fd, "", false}, {stderr_fd, "", true}}, log_fd, std::move(on_stderr_line)) {}
  ~OutputCapture();
  OutputCapture(const OutputCapture&) = delete;
  OutputCapture& operator=(const OutputCapture&) = delete;

  // Values to mask from now on (the job's secret variables); empty ones are ignored.
  void MaskSecrets(std::vector<std::string> secrets);
  // Copies available output; waits at most timeout_ms for some, or for one of also_wake_on.
  Status Pump(int timeout_ms, const std::vector<int>& also_wake_on = {});
  void Drain();
  bool open() const;

 private:
  struct State {
    OutputStream stream;
    std::string line;  // the current incomplete line (for the callback and for prefixing)
  };
  bool LineByLine(const State& state) const { return !state.stream.prefix.empty() || !secrets_.empty(); }
  std::string Masked(std::string line) const;
  void Consume(State& state, const char* data, size_t size);
  void EndLine(State& state);
  void WriteLog(const char* data, size_t size);
  void Close(State& state);

  std::vector<State> states_;
  int log_fd_;
  LineCallback on_line_;
  bool log_failed_ = false;
  std::vector<std::string> secrets_;  // longest first
};

}  // namespace shoal
