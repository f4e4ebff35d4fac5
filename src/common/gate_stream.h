// The httplib::Stream a worker serves one gated request through: reads come from the
// request the gate has already buffered, writes go to the socket with a deadline.
//
// Contract: read() returns the request's bytes, then 0. write() sends everything or
// fails (returning -1, and broken() turns true) when the socket errs or accepts nothing
// for write_timeout; the socket stays non-blocking throughout. Not thread-safe: one
// worker uses it for one request.
#pragma once

#include <httplib.h>

#include <chrono>
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

  bool broken() const { return broken_; }

 private:
  bool WaitWritable() const;

  const GateConnection& connection_;
  const std::string_view request_;
  const std::chrono::milliseconds write_timeout_;
  size_t read_ = 0;
  bool broken_ = false;
};

}  // namespace shoal
