#include "common/gate_stream.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace shoal {

GateStream::GateStream(const GateConnection& connection, std::chrono::milliseconds write_timeout)
    : connection_(connection), request_(connection.request_bytes()), write_timeout_(write_timeout) {}

bool GateStream::WaitWritable() const {
  pollfd p{connection_.fd(), POLLOUT, 0};
  int ready;
  do {
    ready = poll(&p, 1, static_cast<int>(write_timeout_.count()));
  } while (ready < 0 && errno == EINTR);
  return ready > 0 && (p.revents & POLLOUT) && !(p.revents & (POLLERR | POLLHUP));
}

bool GateStream::is_writable() const { return !broken_ && WaitWritable(); }

ssize_t GateStream::read(char* ptr, size_t size) {
  size_t n = std::min(size, request_.size() - read_);
  std::memcpy(ptr, request_.data() + read_, n);
  read_ += n;
  return static_cast<ssize_t>(n);
}

ssize_t GateStream::write(const char* ptr, size_t size) {
  size_t sent = 0;
  while (!broken_ && sent < size) {
    ssize_t n = send(connection_.fd(), ptr + sent, size - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!WaitWritable()) broken_ = true;  // the client stopped reading
    } else {
      broken_ = true;
    }
  }
  return broken_ ? -1 : static_cast<ssize_t>(size);
}

void GateStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  ip = connection_.peer_address();
  port = connection_.peer_port();
}

void GateStream::get_local_ip_and_port(std::string& ip, int& port) const {
  ip = connection_.local_address();
  port = connection_.local_port();
}

}  // namespace shoal
