#include "container/output_capture.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace shoal {

OutputCapture::OutputCapture(std::vector<OutputStream> streams, int log_fd, LineCallback on_line)
    : log_fd_(log_fd), on_line_(std::move(on_line)) {
  for (auto& stream : streams) {
    if (stream.fd >= 0) fcntl(stream.fd, F_SETFL, fcntl(stream.fd, F_GETFL) | O_NONBLOCK);
    states_.push_back({std::move(stream), {}});
  }
}

OutputCapture::~OutputCapture() {
  for (auto& state : states_) Close(state);
}

bool OutputCapture::open() const {
  for (const auto& state : states_) {
    if (state.stream.fd >= 0) return true;
  }
  return false;
}

void OutputCapture::Close(State& state) {
  if (state.stream.fd >= 0) close(state.stream.fd);
  state.stream.fd = -1;
}

void OutputCapture::WriteLog(const char* data, size_t size) {
  if (log_fd_ < 0 || log_failed_) return;
  size_t written = 0;
  while (written < size) {
    ssize_t n = write(log_fd_, data + written, size - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      log_failed_ = true;  // a full disk must not stop the program: keep reading, stop writing
      return;
    }
    written += static_cast<size_t>(n);
  }
}

void OutputCapture::MaskSecrets(std::vector<std::string> secrets) {
  std::erase(secrets, "");
  // Longest first, so a secret that contains another is masked whole.
  std::sort(secrets.begin(), secrets.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  secrets_ = std::move(secrets);
}

std::string OutputCapture::Masked(std::string line) const {
  static constexpr std::string_view kMask = "********";
  for (const auto& secret : secrets_) {
    for (size_t at = line.find(secret); at != std::string::npos; at = line.find(secret, at + kMask.size())) {
      line.replace(at, secret.size(), kMask);
    }
  }
  return line;
}

void OutputCapture::EndLine(State& state) {
  if (!secrets_.empty()) state.line = Masked(std::move(state.line));
  if (LineByLine(state)) {
    std::string out = state.stream.prefix + state.line + "\n";
    WriteLog(out.data(), out.size());
  }
  if (state.stream.read_lines) on_line_(state.line);
  state.line.clear();
}

void OutputCapture::Consume(State& state, const char* data, size_t size) {
  bool line_by_line = LineByLine(state);
  if (!line_by_line) WriteLog(data, size);
  if (!line_by_line && !state.stream.read_lines) return;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == '\n') {
      EndLine(state);
    } else {
      if (state.line.size() >= kMaxLine) EndLine(state);
      state.line.push_back(data[i]);
    }
  }
}

Status OutputCapture::Pump(int timeout_ms, const std::vector<int>& also_wake_on) {
  std::vector<pollfd> polls;
  std::vector<State*> polled;
  for (auto& state : states_) {
    if (state.stream.fd < 0) continue;
    polls.push_back({state.stream.fd, POLLIN, 0});
    polled.push_back(&state);
  }
  if (polls.empty() && also_wake_on.empty()) return Status::Ok();
  for (int fd : also_wake_on) polls.push_back({fd, POLLIN, 0});
  int ready = poll(polls.data(), polls.size(), timeout_ms);
  if (ready < 0) return errno == EINTR ? Status::Ok() : Internal(std::string("poll: ") + strerror(errno));
  char buffer[64 * 1024];
  for (size_t p = 0; p < polled.size(); ++p) {
    if (!(polls[p].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    State& state = *polled[p];
    // Read a bounded amount per wake-up so no stream starves the others.
    for (int round = 0; round < 16; ++round) {
      ssize_t n = read(state.stream.fd, buffer, sizeof buffer);
      if (n > 0) {
        Consume(state, buffer, static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) break;
      Close(state);
      break;
    }
  }
  return Status::Ok();
}

void OutputCapture::Drain() {
  char buffer[64 * 1024];
  for (int round = 0; round < 64 && open(); ++round) {
    bool any = false;
    for (auto& state : states_) {
      if (state.stream.fd < 0) continue;
      ssize_t n = read(state.stream.fd, buffer, sizeof buffer);
      if (n > 0) {
        Consume(state, buffer, static_cast<size_t>(n));
        any = true;
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        Close(state);
      }
    }
    if (!any) break;
  }
  for (auto& state : states_) {
    if (!state.line.empty()) EndLine(state);
  }
}

}  // namespace shoal
