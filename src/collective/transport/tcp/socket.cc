#include "collective/transport/tcp/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace shoal::collective::transport::tcp {
namespace {

void SetBuffers(int fd, const SocketOptions& options) {
  if (options.buffer_bytes <= 0) return;
  int v = options.buffer_bytes;
  // The *FORCE variants pass net.core.[rw]mem_max when running as root.
  if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &v, sizeof(v)) != 0)
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v));
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v)) != 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
}

Status Resolve(const std::string& host, int port, sockaddr_storage* out, socklen_t* len) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
  if (rc != 0 || !res) return Unavailable("cannot resolve host '" + host + "': " + gai_strerror(rc));
  std::memcpy(out, res->ai_addr, res->ai_addrlen);
  *len = res->ai_addrlen;
  freeaddrinfo(res);
  return Status::Ok();
}

}  // namespace

Status PollOne(int fd, short events, Deadline deadline, const char* what) {
  while (true) {
    pollfd p{fd, events, 0};
    int rc = poll(&p, 1, static_cast<int>(std::min<int64_t>(MillisLeft(deadline), 1 << 30)));
    if (rc > 0) return Status::Ok();
    if (rc == 0) return Timeout(std::string("timed out during ") + what);
    if (errno != EINTR) return Unavailable(std::string("poll failed during ") + what + ": " + ErrnoText(errno));
  }
}

void Fd::Reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::string ErrnoText(int err) { return std::strerror(err); }

Result<Fd> Listen(const std::string& host, const SocketOptions& options, int* port) {
  sockaddr_storage addr{};
  socklen_t len = 0;
  RETURN_IF_ERROR(Resolve(host, 0, &addr, &len));
  Fd fd(socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return Unavailable("socket(): " + ErrnoText(errno));
  int one = 1;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  SetBuffers(fd.get(), options);  // inherited by accepted sockets
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0)
    return Unavailable("cannot bind to " + host + ": " + ErrnoText(errno));
  if (listen(fd.get(), SOMAXCONN) != 0) return Unavailable("listen on " + host + ": " + ErrnoText(errno));
  sockaddr_storage bound{};
  socklen_t blen = sizeof(bound);
  getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &blen);
  *port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  return fd;
}

Result<Fd> Connect(const std::string& address, const SocketOptions& options, Deadline deadline) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos) return InvalidArgument("bad peer address '" + address + "'");
  std::string host = address.substr(0, colon);
  if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  sockaddr_storage addr{};
  socklen_t len = 0;
  RETURN_IF_ERROR(Resolve(host, std::atoi(address.c_str() + colon + 1), &addr, &len));
  while (true) {
    Fd fd(socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd.valid()) return Unavailable("socket(): " + ErrnoText(errno));
    SetBuffers(fd.get(), options);  // before connect, so the window scale is negotiated
    if (connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), len) == 0) return fd;
    int err = errno;
    if ((err != ECONNREFUSED && err != EINTR && err != EAGAIN) || Clock::now() >= deadline)
      return Unavailable("cannot connect to " + address + ": " + ErrnoText(err));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

Result<Fd> Accept(int listen_fd, Deadline deadline) {
  while (true) {
    RETURN_IF_ERROR(PollOne(listen_fd, POLLIN, deadline, "accept"));
    int fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) return Fd(fd);
    if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED)
      return Unavailable("accept(): " + ErrnoText(errno));
  }
}

Status WriteFully(int fd, const void* data, size_t n, Deadline deadline) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t rc = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (rc > 0) {
      p += rc;
      n -= static_cast<size_t>(rc);
    } else if (rc < 0 && (errno == EAGAIN || errno == EINTR)) {
      RETURN_IF_ERROR(PollOne(fd, POLLOUT, deadline, "handshake write"));
    } else {
      return Unavailable("handshake write: " + ErrnoText(errno));
    }
  }
  return Status::Ok();
}

Status ReadFully(int fd, void* data, size_t n, Deadline deadline) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    ssize_t rc = recv(fd, p, n, MSG_DONTWAIT);
    if (rc > 0) {
      p += rc;
      n -= static_cast<size_t>(rc);
    } else if (rc == 0) {
      return Unavailable("connection closed during handshake");
    } else if (errno == EAGAIN || errno == EINTR) {
      RETURN_IF_ERROR(PollOne(fd, POLLIN, deadline, "handshake read"));
    } else {
      return Unavailable("handshake read: " + ErrnoText(errno));
    }
  }
  return Status::Ok();
}

Status MakeDataSocket(int fd) {
  int one = 1;
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0)
    return Unavailable("TCP_NODELAY: " + ErrnoText(errno));
  int flags = fcntl(fd, F_GETFL, 0);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0)
    return Unavailable("O_NONBLOCK: " + ErrnoText(errno));
  return Status::Ok();
}

}  // namespace shoal::collective::transport::tcp
