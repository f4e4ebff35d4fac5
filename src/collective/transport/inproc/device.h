// inproc::Device: a transport whose ranks are threads of one process, for tests.
// Messages are copied through queues in a shared hub; there are no sockets.
//
// Contract: the same as transport/context.h, with stricter checks that help tests:
// a receive whose size differs from the matching send fails with kInternal. Sends
// complete at once (they are buffered without limit). Peer failure is modelled:
// Kill(rank) makes a rank vanish without a goodbye, as a crashed process would, and
// every other rank that waits on anything then fails with kAborted naming it.
// One Device is one communicator; build a new Device to rebuild after a failure.
// The store passed to Connect is not used. Hosts are whatever the test assigns; the
// ranks of a host with two or more get an arena (transport/shared_arena.h) in
// ordinary memory, so that the single-host and host-leaders algorithms run here too.
// Thread-safety: Connect and Kill are thread-safe; each Context is used by the
// thread of its rank.
#pragma once

#include <memory>
#include <vector>

#include "collective/transport/context.h"

namespace shoal::collective::transport::inproc {

struct Hub;

class Device : public transport::Device {
 public:
  // hosts[r]: the host rank r pretends to run on (for algorithms that care); empty:
  // all ranks on one host.
  explicit Device(int size, std::vector<int> hosts = {});
  ~Device() override;

  Result<std::unique_ptr<transport::Context>> Connect(int rank, int size, Store& store, Deadline deadline) override;
  std::string name() const override { return "inproc"; }

  // Simulates the crash of `rank`: its links break without a goodbye.
  void Kill(int rank);

 private:
  std::shared_ptr<Hub> hub_;
};

}  // namespace shoal::collective::transport::inproc
