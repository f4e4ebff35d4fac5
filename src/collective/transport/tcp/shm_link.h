// tcp::ShmLink: the data path of a Pair whose peer shares this host: transfers move
// through two shm::Channels (one per direction) instead of sockets, with the same
// ordering and matching rules as the socket path. The Pair keeps its control socket
// (goodbye, abort, probes: a dead peer is still seen at once) and uses its first data
// socket only as a doorbell, to wake a peer that went to sleep in poll().
//
// Contract:
//  - Progress() copies what the channels allow without blocking and says whether the
//    peer may be asleep waiting for what moved (the Pair then rings the doorbell).
//  - ArmForSleep() raises the channels' asleep flags for the directions with queued
//    work; it returns false when one of them can move now (do not sleep).
// Ownership: views channels of a shm::Segment the Context keeps alive.
// Thread-safety: none; owned by one Pair.
#pragma once

#include <string>

#include "collective/transport/shm/channel.h"
#include "collective/transport/tcp/transfer_queue.h"

namespace shoal::collective::transport::tcp {

class ShmLink {
 public:
  ShmLink(shm::Channel out, shm::Channel in) : out_(out), in_(in) {}

  uint64_t PostSend(const void* data, size_t bytes);
  uint64_t PostRecv(void* data, size_t bytes);
  bool SendDone(uint64_t seq) const { return send_.done >= seq; }
  bool RecvDone(uint64_t seq) const { return recv_.done >= seq; }
  bool idle() const { return send_.queue.empty() && recv_.queue.empty(); }
  size_t pending_send_bytes() const { return send_.pending_bytes(); }
  size_t pending_recv_bytes() const { return recv_.pending_bytes(); }

  void Progress(bool* progressed, bool* wake_peer);
  bool ArmForSleep();
  void Clear();

 private:
  shm::Channel out_, in_;
  TransferQueue send_, recv_;
  uint64_t sends_posted_ = 0, recvs_posted_ = 0;
};

}  // namespace shoal::collective::transport::tcp
