// tcp::Pair: this rank's link to one peer - one control socket plus one or more
// data sockets - and the queues of transfers posted on it. A peer on the same host
// has a ShmLink too: its transfers then move through shared memory, and the first
// data socket only carries wake-ups (shm_link.h).
//
// Contract:
//  - A message of n bytes is striped over the data sockets (n / k bytes each) when
//    n >= stripe_min and there are k > 1 of them; otherwise it goes whole over the
//    first one. Both ends apply the same rule, so sizes must match (transport rule).
//  - The control socket carries only "goodbye" (orderly Close), "abort <reason>" and
//    liveness probes with their answers, and is watched during every Wait, so a peer
//    that dies or aborts is noticed even while this rank waits on other peers.
//  - Progress() moves whatever the sockets accept without blocking; the owning
//    tcp::Context decides when to poll.
// Ownership: owns its sockets; posted buffers belong to the caller.
// Thread-safety: none; owned and driven by one tcp::Context.
#pragma once

#include <poll.h>

#include <memory>
#include <string>
#include <vector>

#include "collective/transport/tcp/shm_link.h"
#include "collective/transport/tcp/socket.h"
#include "collective/transport/tcp/transfer_queue.h"

namespace shoal::collective::transport::tcp {

class Pair {
 public:
  // `shm`, when given, carries the data; data[0] is then its doorbell.
  Pair(int self, int peer, Fd control, std::vector<Fd> data, size_t stripe_min, std::unique_ptr<ShmLink> shm = nullptr);

  int peer() const { return peer_; }
  uint64_t PostSend(const void* data, size_t bytes);
  uint64_t PostRecv(void* data, size_t bytes);
  bool SendDone(uint64_t seq) const { return shm_ ? shm_->SendDone(seq) : Done(&Socket::send, seq); }
  bool RecvDone(uint64_t seq) const { return shm_ ? shm_->RecvDone(seq) : Done(&Socket::recv, seq); }
  bool idle() const;

  // Non-blocking I/O on every data socket (or the shared-memory link) with queued work.
  Status Progress(bool* progressed);
  // Before sleeping in poll(): false when shared-memory transfers can move now.
  bool ArmForSleep() { return !shm_ || shm_->ArmForSleep(); }
  // Appends the fds to poll; control first. Returns how many were appended. Sets
  // each reading socket's SO_RCVLOWAT to what its next receive still needs (capped),
  // so a sleeping rank is woken once per chunk, not once per packet. `doorbell`
  // watches the doorbell of a shared-memory pair even with no transfer queued.
  size_t PreparePoll(std::vector<pollfd>* fds, bool doorbell = false);
  // Wakes the peer of a shared-memory pair if it sleeps in poll().
  void RingDoorbell();
  // Reads what arrived on the control socket (and drains the doorbell); kAborted if
  // the peer died or aborted.
  Status ReadControl();
  // "recv 4096 bytes" style summary of queued work, for timeout messages.
  std::string PendingText() const;

  void SendGoodbye();
  void SendAbort(const std::string& reason);
  // Liveness probe near a deadline: the peer answers from its progress loop, so a
  // peer that stays silent is stopped, hung, or busy outside collectives.
  void SendProbe();
  bool answered_probe() const { return answered_probe_; }
  // The peer closed its communicator in order (its goodbye arrived).
  bool said_goodbye() const { return goodbye_; }
  void CloseAll();

 private:
  struct Socket {
    Fd fd;
    TransferQueue send;
    TransferQueue recv;
    int rcvlowat = 1;  // the kernel's default
  };

  uint64_t Post(TransferQueue Socket::*stream, char* data, size_t bytes);
  bool Done(TransferQueue Socket::*stream, uint64_t seq) const;
  // Moves bytes of the queued transfers until the queue is empty or fd would block.
  Status Drain(int fd, bool is_send, TransferQueue* stream, bool* progressed);
  void DrainDoorbell();
  // The error for a broken data socket, quoting the peer's abort reason if it sent one.
  Status PeerLost(const std::string& detail);

  const int self_;
  const int peer_;
  const size_t stripe_min_;
  Fd control_;
  std::vector<Socket> data_;
  std::unique_ptr<ShmLink> shm_;
  bool doorbell_eof_ = false;
  uint64_t sends_posted_ = 0;
  uint64_t recvs_posted_ = 0;
  std::string control_in_;  // unparsed control bytes
  bool goodbye_ = false;
  bool answered_probe_ = false;
  bool control_eof_ = false;
  std::string abort_reason_;
};

}  // namespace shoal::collective::transport::tcp
