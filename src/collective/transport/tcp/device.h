// tcp::Device: the TCP transport, with shared memory between ranks of one host.
// Connect() publishes this rank's listening address in the rendezvous store, then
// builds a full mesh: every pair of ranks gets one control connection plus
// `connections_per_pair` data connections. With `shared_memory` (the default) the
// ranks then publish their host identity (shm/host_identity.h); ranks that share a
// host map one shared segment (shm/segment.h) and move their data through it, the
// sockets between them carrying only control messages and wake-ups. Ranks on
// different hosts use TCP.
//
// Contract: see transport/context.h. Sockets use TCP_NODELAY, non-blocking I/O, and
// (when buffer_bytes > 0) fixed send/receive buffers, forced past the sysctl
// limits when the process may (root).
// Store keys used (under the caller's prefix): "tcp/<rank>" = "host:port",
// "host/<rank>" = host identity, "shm/<rank>" = a host leader's socket name.
// Thread-safety: Connect may be called from several threads (one per rank in tests).
#pragma once

#include <string>

#include "collective/transport/context.h"
#include "collective/transport/tcp/socket.h"

namespace shoal::collective::transport::tcp {

struct Options {
  // Address to listen on and to advertise to the other ranks.
  std::string host = "127.0.0.1";
  // Data connections per pair of ranks; messages of stripe_min_bytes or more are
  // split across them.
  int connections_per_pair = 1;
  size_t stripe_min_bytes = 256 << 10;
  SocketOptions socket;
  // Busy-poll (yielding the CPU each turn) this long before sleeping in poll();
  // -1 picks 50 us when the ranks of this host fit on its cores and 20 us otherwise.
  int spin_us = -1;
  // How many ranks share this host (for spin_us = -1); 0 means "all of them".
  int local_ranks = 0;
  // Ranks of one host exchange data through shared memory instead of loopback TCP.
  bool shared_memory = true;
  // A host name assigned by the caller, appended to the measured host identity: it
  // can split one host into several (tests of mixed layouts), never join two.
  std::string host_name;
};

class Device : public transport::Device {
 public:
  explicit Device(Options options) : options_(std::move(options)) {}
  Result<std::unique_ptr<transport::Context>> Connect(int rank, int size, Store& store, Deadline deadline) override;
  std::string name() const override { return "tcp"; }

 private:
  const Options options_;
};

}  // namespace shoal::collective::transport::tcp
