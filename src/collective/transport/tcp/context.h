// tcp::Context: one rank's full mesh of TCP pairs and the progress loop that drives
// them (see transport/context.h for the contract).
//
// The loop: try non-blocking I/O on every pair with queued work; if nothing moved,
// spin for up to `spin` (cheap when ranks have their own cores and messages are
// small), then block in poll() on the data sockets with work (or the doorbells of
// shared-memory pairs, once their asleep flags are up) and on every peer's control
// socket, so a dead or aborting peer is seen while waiting on another one.
// When the deadline is near (kProbeWindow), every peer is probed on its control
// socket; a timeout error then names the peers that did not answer, which points at
// a hung rank even when this rank was waiting on a different, healthy one.
// When other ranks share this host, arena() offers the segment's Arena; its Barrier
// waits in the same loop (spin, then poll() on the control sockets and the
// doorbells, which an arriving rank rings for each rank that went to sleep).
// Ownership: owns the pairs.
// Thread-safety: one thread at a time.
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "collective/transport/context.h"
#include "collective/transport/shm/arena_view.h"
#include "collective/transport/shm/segment.h"
#include "collective/transport/tcp/pair.h"

namespace shoal::collective::transport::tcp {

// How long a waiting rank spins before it sleeps, and how much of that it only
// polls memory (pause) before it starts yielding the CPU on every turn.
struct Spin {
  std::chrono::microseconds total{0};
  std::chrono::microseconds poll_only{0};
};

class Context : public transport::Context {
 public:
  // pairs[rank] is null; every other entry is connected. `segment` holds the
  // shared-memory channels of the pairs that have them (null when none do);
  // hosts[r] is rank r's host (empty: unknown, every rank its own).
  Context(int rank, int size, std::vector<std::unique_ptr<Pair>> pairs, Spin spin,
          std::unique_ptr<shm::Segment> segment = nullptr, std::vector<int> hosts = {});
  ~Context() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int host(int rank) const override { return hosts_.empty() ? rank : hosts_[rank]; }
  Request PostSend(int peer, const void* data, size_t bytes) override;
  Request PostRecv(int peer, void* data, size_t bytes) override;
  Status Wait(const Request& req, Deadline deadline) override;
  Status WaitAll(Deadline deadline) override;
  void Abort(const std::string& reason) override;
  void Close() override;
  SharedArena* arena() override { return arena_view_.get(); }

 private:
  Status ArenaBarrier(Deadline deadline);
  template <typename DoneFn>
  Status Drive(DoneFn done, Deadline deadline);
  // Blocks in poll() until some socket is ready or the deadline passes.
  Status Block(Deadline deadline);
  Status DeadlineError(bool probed) const;
  Status Fail(Status s);

  const int rank_;
  const int size_;
  const std::chrono::microseconds spin_;
  const std::chrono::microseconds poll_only_;
  const std::vector<int> hosts_;
  std::unique_ptr<shm::Segment> segment_;  // declared first: the pairs view it
  std::vector<std::unique_ptr<Pair>> pairs_;
  std::vector<pollfd> fds_;      // scratch for Block
  std::vector<Pair*> fd_owner_;  // fds_[i] belongs to fd_owner_[i]
  Status broken_;
  bool closed_ = false;
  Deadline probed_for_{};  // the deadline whose probe was sent
  std::unique_ptr<shm::ArenaView> arena_view_;  // when other ranks are local
  uint64_t arena_steps_ = 0;               // barriers this rank arrived at
  bool in_arena_barrier_ = false;
};

}  // namespace shoal::collective::transport::tcp
