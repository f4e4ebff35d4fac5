#include "common/gate_stream.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

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
  if (broken_) return -1;
  if (held_.size() + size <= kHeldBytes) {
    held_.append(ptr, size);
    return static_cast<ssize_t>(size);
  }
  return SendAll(std::string_view(ptr, size)) ? static_cast<ssize_t>(size) : -1;
}

bool GateStream::Flush() { return !broken_ && (held_.empty() || SendAll({})); }

bool GateStream::SendAll(std::string_view more) {
  size_t held_sent = 0;
  size_t more_sent = 0;
  while (!broken_ && (held_sent < held_.size() || more_sent < more.size())) {
    iovec parts[2];
    int count = 0;
    if (held_sent < held_.size()) parts[count++] = {held_.data() + held_sent, held_.size() - held_sent};
    if (more_sent < more.size()) parts[count++] = {const_cast<char*>(more.data()) + more_sent, more.size() - more_sent};
    msghdr message{};
    message.msg_iov = parts;
    message.msg_iovlen = static_cast<size_t>(count);
    ssize_t n = sendmsg(connection_.fd(), &message, MSG_NOSIGNAL);
    if (n > 0) {
      size_t from_held = std::min(static_cast<size_t>(n), held_.size() - held_sent);
      held_sent += from_held;
      more_sent += static_cast<size_t>(n) - from_held;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!WaitWritable()) broken_ = true;  // the client stopped reading
    } else {
      broken_ = true;
    }
  }
  held_.clear();
  return !broken_;
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
