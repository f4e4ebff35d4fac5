// PortReservation: ports a task will listen on, held by bound sockets until just before
// the user program starts, so no other reservation on the host can take them meanwhile.
// Thread-safety: one owner.
#pragma once

#include <vector>

#include "common/status.h"

namespace shoal {

class PortReservation {
 public:
  PortReservation() = default;
  ~PortReservation() { Release(); }
  PortReservation(const PortReservation&) = delete;
  PortReservation& operator=(const PortReservation&) = delete;

  // Binds `count` listening-capable sockets to free ports on all addresses.
  Status Reserve(int count);
  const std::vector<int>& ports() const { return ports_; }
  // Closes the sockets so the program can bind the ports itself.
  void Release();

 private:
  std::vector<int> fds_;
  std::vector<int> ports_;
};

}  // namespace shoal
