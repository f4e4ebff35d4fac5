// LinkProxy: a loopback TCP relay between one container agent and its AM that a test can
// cut and heal: the mini cluster's stand-in for a network partition (lost heartbeats).
//
// Contract:
//  - Listens on 127.0.0.1 at a free port (address()) and relays each connection to target
//    ("host:port"), both ways, until either side closes.
//  - While cut, a new connection is closed as soon as it is accepted (the agent sees its AM
//    unreachable, as after a partition), and relays already open are shut down.
//  - The destructor ends every relay and joins every thread.
// Thread-safety: Cut() and Heal() may be called from any thread.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"

namespace shoal::testing {

class LinkProxy {
 public:
  static Result<std::unique_ptr<LinkProxy>> Start(const std::string& target);
  ~LinkProxy();
  LinkProxy(const LinkProxy&) = delete;
  LinkProxy& operator=(const LinkProxy&) = delete;

  const std::string& address() const { return address_; }
  void Cut() { cut_ = true; }
  void Heal() { cut_ = false; }
  bool cut() const { return cut_; }

 private:
  LinkProxy(int listen_fd, std::string address, std::string target_host, int target_port);
  void AcceptLoop();
  void Serve(int client_fd);

  int listen_fd_;
  std::string address_;
  std::string target_host_;
  int target_port_;
  std::atomic<bool> cut_{false};
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  struct Relay {
    std::thread thread;
    std::atomic<bool> finished{false};
  };
  std::vector<std::unique_ptr<Relay>> relays_;  // the acceptor's own; finished ones are joined as it goes
};

}  // namespace shoal::testing
