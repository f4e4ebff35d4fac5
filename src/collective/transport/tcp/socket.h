// Socket helpers for the TCP transport: an owning file descriptor, the socket
// options that matter for throughput and latency, and the blocking-with-deadline
// steps of connection setup (listen, connect, accept, hello exchange).
//
// Contract: every function returns a Status naming the address or peer involved;
// none blocks past its deadline. Data transfer during collectives does not use
// these helpers: it is non-blocking and lives in pair.cc.
// Thread-safety: Fd is a move-only value; the functions are reentrant.
#pragma once

#include <string>
#include <utility>

#include "collective/types.h"
#include "common/status.h"

namespace shoal::collective::transport::tcp {

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      Reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { Reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void Reset();

 private:
  int fd_ = -1;
};

struct SocketOptions {
  // SO_SNDBUF/SO_RCVBUF in bytes; 0 leaves the kernel's autotuning in charge.
  int buffer_bytes = 4 << 20;
};

// "strerror(errno)" in a Status-friendly form.
std::string ErrnoText(int err);

// Listens on host:0 (an ephemeral port); *port receives the port chosen.
Result<Fd> Listen(const std::string& host, const SocketOptions& options, int* port);
// Connects to "host:port", retrying refused connections until the deadline.
Result<Fd> Connect(const std::string& address, const SocketOptions& options, Deadline deadline);
// Accepts one connection on a listening socket.
Result<Fd> Accept(int listen_fd, Deadline deadline);
// Blocking exact read/write of a small buffer on a (blocking or not) socket.
Status WriteFully(int fd, const void* data, size_t n, Deadline deadline);
Status ReadFully(int fd, void* data, size_t n, Deadline deadline);
// Waits until `fd` is ready for `events`; kTimeout at the deadline names `what`.
Status PollOne(int fd, short events, Deadline deadline, const char* what);
// Sets TCP_NODELAY and O_NONBLOCK: the state used while collectives run.
Status MakeDataSocket(int fd);

}  // namespace shoal::collective::transport::tcp
