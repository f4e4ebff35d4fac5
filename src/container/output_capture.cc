#include "container/output_capture.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace shoal {

OutputCapture::OutputCapture(int stdout_fd, int stderr_fd, int log_fd, LineCallback on_stderr_line)
    : fds_{stdout_fd, stderr_fd}, log_fd_(log_fd), on_stderr_line_(std::move(on_stderr_line)) {
  for (int fd : fds_) {
    if (fd >= 0) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
}

OutputCapture::~OutputCapture() {
  for (int fd : fds_) {
    if (fd >= 0) close(fd);
  }
}

void OutputCapture::Consume(int which, const char* data, size_t size) {
  if (log_fd_ >= 0 && !log_failed_) {
    size_t written = 0;
    while (written < size) {
      ssize_t n = write(log_fd_, data + written, size - written);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        // A full disk must not stop the program: keep reading, stop writing.
        log_failed_ = true;
        break;
      }
      written += static_cast<size_t>(n);
    }
  }
  if (which != 1) return;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == '\n') {
      on_stderr_line_(partial_line_);
      partial_line_.clear();
    } else if (partial_line_.size() < kMaxLine) {
      partial_line_.push_back(data[i]);
    } else {
      on_stderr_line_(partial_line_);
      partial_line_.assign(1, data[i]);
    }
  }
}

Status OutputCapture::Pump(int timeout_ms) {
  pollfd polls[2];
  int count = 0;
  int which[2];
  for (int i = 0; i < 2; ++i) {
    if (fds_[i] < 0) continue;
    polls[count] = {fds_[i], POLLIN, 0};
    which[count++] = i;
  }
  if (count == 0) return Status::Ok();
  int ready = poll(polls, count, timeout_ms);
  if (ready < 0) return errno == EINTR ? Status::Ok() : Internal(std::string("poll: ") + strerror(errno));
  char buffer[64 * 1024];
  for (int p = 0; p < count; ++p) {
    if (!(polls[p].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    int i = which[p];
    // Read a bounded amount per wake-up so neither stream starves the other.
    for (int round = 0; round < 16; ++round) {
      ssize_t n = read(fds_[i], buffer, sizeof buffer);
      if (n > 0) {
        Consume(i, buffer, static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) break;
      close(fds_[i]);
      fds_[i] = -1;
      break;
    }
  }
  return Status::Ok();
}

void OutputCapture::Drain() {
  for (int round = 0; round < 64 && open(); ++round) {
    bool any = false;
    char buffer[64 * 1024];
    for (int i = 0; i < 2; ++i) {
      if (fds_[i] < 0) continue;
      ssize_t n = read(fds_[i], buffer, sizeof buffer);
      if (n > 0) {
        Consume(i, buffer, static_cast<size_t>(n));
        any = true;
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        close(fds_[i]);
        fds_[i] = -1;
      }
    }
    if (!any) break;
  }
  if (!partial_line_.empty()) {
    on_stderr_line_(partial_line_);
    partial_line_.clear();
  }
}

}  // namespace shoal
