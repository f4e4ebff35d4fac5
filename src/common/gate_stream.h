// The httplib::Stream a worker serves one gated request through: reads come from the
// request the gate has already buffered, writes go to the socket with a deadline.
//
// Contract: read() returns the request's bytes, then 0. write() holds small writes back
// (up to kHeldBytes in all) and sends them with the next larger one, or at Flush(): a
// response's head and a small body leave in one segment, one system call, where
// cpp-httplib writes them apart. The caller must Flush() once the response is written.
// A send sends everything or fails (write() returns -1, Flush() false, and broken()
// turns true) when the socket errs or accepts nothing for write_timeout; the socket
// stays non-blocking throughout. Not thread-safe: one worker uses it for one request.
#pragma once

#include <httplib.h>

#include <chrono>
#include <string>
#include <string_view>

#include "common/connection_gate.h"

namespace shoal {

class GateStream : public httplib::Stream {
 public:
  GateStream(const GateConnection& connection, std::chrono::milliseconds write_timeout);

  bool is_readable() const override { return read_ < request_.size(); }
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return connection_.fd(); }

  // Sends what write() holds back. False when the socket broke.
  bool Flush();
  bool broken() const { return broken_; }

  static constexpr size_t kHeldBytes = 16 * 1024;

 private:
  bool WaitWritable() const;
  // Sends `held_` then `more` in as few sends as the socket takes; false when it broke.
  bool SendAll(std::string_view more);

  const GateConnection& connection_;
  const std::string_view request_;
  const std::chrono::milliseconds write_timeout_;
  size_t read_ = 0;
  std::string held_;
  bool broken_ = false;
};

}  // namespace shoal
