// The clients of api_bench's hostile scenario, all on loopback and all held open at once:
// connections that only connect, connections that send a request head one byte every
// half second (and never finish it), and long polls on a job that never changes. They
// stand for a port scanner, a slowloris attack and a crowd of open browser tabs.
//
// Contract: the constructor opens every connection and returns once all are sent what
// they send first; a thread keeps the slow ones trickling until the destructor, which
// closes everything. Connections the server closes (its deadlines, its bounds) are
// counted by Closed(). Thread-safety: one owner.
#pragma once

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace shoal {

struct HostileMix {
  int idle = 1000;
  int slow = 200;
  int long_polls = 200;
  std::string long_poll_target;  // e.g. /api/v1/jobs/job-1?wait_version=3&wait_ms=60000
};

class HostileClients {
 public:
  HostileClients(int port, const HostileMix& mix);
  ~HostileClients();
  HostileClients(const HostileClients&) = delete;
  HostileClients& operator=(const HostileClients&) = delete;

  int opened() const { return static_cast<int>(idle_.size() + slow_.size() + polls_.size()); }
  int Closed() const;  // how many of them the server has closed so far

 private:
  void Trickle();

  std::vector<int> idle_, slow_, polls_;
  std::atomic<bool> stop_{false};
  std::thread trickle_;
};

}  // namespace shoal
