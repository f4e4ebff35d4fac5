// An httplib::Server whose connections wait in a ConnectionGate (common/connection_gate.h)
// instead of holding a worker thread each: cpp-httplib routes and answers the requests,
// the gate reads them. Shoal's server and every AM use it.
//
// Contract:
//  - Register routes and hooks as on any httplib::Server; BindServer and
//    ServeInBackground (common/http_server.h) work unchanged.
//  - `workers` threads run handlers; a request reaches one only when the gate holds it
//    whole. A response is written with a deadline of write_timeout per write: a client
//    that stops reading loses its connection, not a worker for ever.
//  - Kept-alive connections go back to the gate between requests; pipelined requests are
//    served in order.
//  - set_parking_rule / WakeParked: long polls that the rule parks wait in the gate (see
//    ConnectionGate); call WakeParked() whenever what they wait for may have changed.
//  - The destructor stops the gate first (no new requests), then lets the workers finish
//    the requests they have.
//  - FitToOpenFileLimit raises the process's soft limit on open files to its hard limit
//    (the gate holds a descriptor per connection; the usual soft limit is 1024) and
//    lowers max_connections so that the gate leaves descriptors for everything else.
//    Processes it spawns get the original limit back (KeepChildrensOpenFileLimit).
#pragma once

#include <httplib.h>

#include <chrono>
#include <memory>

#include "common/connection_gate.h"

namespace shoal {

GateLimits FitToOpenFileLimit(GateLimits limits);

class GatedHttpServer : public httplib::Server {
 public:
  explicit GatedHttpServer(size_t workers, GateLimits limits = {},
                           std::chrono::milliseconds write_timeout = std::chrono::seconds(10));
  ~GatedHttpServer() override;

  void set_parking_rule(ParkingRule rule) { gate_.set_parking_rule(std::move(rule)); }
  void WakeParked() { gate_.Wake(); }
  GateStats gate_stats() const { return gate_.Stats(); }

 private:
  // Called by cpp-httplib's accept loop for each new connection: the gate takes it.
  bool process_and_close_socket(socket_t sock) override;
  void Serve(std::unique_ptr<GateConnection> connection);

  const std::chrono::milliseconds write_timeout_;
  std::unique_ptr<httplib::ThreadPool> workers_;
  ConnectionGate gate_;
};

}  // namespace shoal
