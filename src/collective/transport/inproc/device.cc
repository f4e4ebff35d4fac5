#include "collective/transport/inproc/device.h"

#include <sys/mman.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "collective/transport/shm/arena_view.h"

namespace shoal::collective::transport::inproc {

// An arena in ordinary memory for the ranks of one pretended host (zeroed pages,
// touched only as they are used).
class ArenaMemory {
 public:
  explicit ArenaMemory(int local) : local_(local), bytes_(shm::Arena::Bytes(local)) {
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();  // a test transport: no quiet fallback
    base_ = static_cast<char*>(p);
  }
  ~ArenaMemory() { munmap(base_, bytes_); }
  ArenaMemory(const ArenaMemory&) = delete;
  ArenaMemory& operator=(const ArenaMemory&) = delete;
  shm::Arena arena() const { return shm::Arena(base_, local_, shm::Arena::SlotBytes(local_)); }

 private:
  int local_;
  size_t bytes_;
  char* base_;
};

// State shared by the ranks of one in-process communicator.
struct Hub {
  Hub(int n, std::vector<int> host_of)
      : size(n), hosts(std::move(host_of)), queues(static_cast<size_t>(n) * n), ranks(n) {
    for (int r = 0; r < n; ++r) local_ranks[host(r)].push_back(r);
    for (auto& [h, locals] : local_ranks)
      if (locals.size() >= 2) arenas[h] = std::make_unique<ArenaMemory>(static_cast<int>(locals.size()));
  }
  int host(int rank) const { return hosts.empty() ? 0 : hosts[rank]; }

  struct RankState {
    bool joined = false;
    bool closed = false;  // orderly Close
    bool dead = false;    // Kill: vanished without goodbye
    bool waiting = false; // inside Wait: the in-process analogue of answering a probe
    std::string abort_reason;
  };

  std::deque<std::vector<char>>& queue(int from, int to) { return queues[static_cast<size_t>(from) * size + to]; }

  const int size;
  const std::vector<int> hosts;  // host of each rank; empty: one host
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::deque<std::vector<char>>> queues;  // guarded by mu
  std::vector<RankState> ranks;                       // guarded by mu
  std::map<int, std::vector<int>> local_ranks;        // by host, in rank order
  std::map<int, std::unique_ptr<ArenaMemory>> arenas;  // hosts of two or more ranks
};

namespace {

class Context : public transport::Context {
 public:
  Context(std::shared_ptr<Hub> hub, int rank) : hub_(std::move(hub)), rank_(rank), recvs_(hub_->size) {
    const int h = hub_->host(rank_);
    if (auto it = hub_->arenas.find(h); it != hub_->arenas.end()) {
      const auto& locals = hub_->local_ranks[h];
      const int me = static_cast<int>(std::find(locals.begin(), locals.end(), rank_) - locals.begin());
      arena_view_ = std::make_unique<shm::ArenaView>(it->second->arena(), me,
                                                     [this](Deadline deadline) { return ArenaBarrier(deadline); });
    }
  }
  ~Context() override { Close(); }

  int rank() const override { return rank_; }
  int size() const override { return hub_->size; }
  int host(int rank) const override { return hub_->host(rank); }
  SharedArena* arena() override { return arena_view_.get(); }

  Request PostSend(int peer, const void* data, size_t bytes) override {
    if (bytes == 0) return Request{peer, true, 0};
    std::vector<char> copy(static_cast<const char*>(data), static_cast<const char*>(data) + bytes);
    {
      std::lock_guard<std::mutex> lock(hub_->mu);
      hub_->queue(rank_, peer).push_back(std::move(copy));
    }
    hub_->cv.notify_all();
    return Request{peer, true, 0};  // buffered: complete at once
  }

  Request PostRecv(int peer, void* data, size_t bytes) override {
    if (bytes == 0) return Request{peer, false, 0};
    PeerRecvs& r = recvs_[peer];
    r.pending.push_back(Pending{static_cast<char*>(data), bytes});
    return Request{peer, false, ++r.posted};
  }

  Status Wait(const Request& req, Deadline deadline) override {
    if (req.seq == 0 || req.is_send) return broken_;
    return Drive([&] { return recvs_[req.peer].done >= req.seq; }, deadline);
  }

  Status WaitAll(Deadline deadline) override {
    return Drive(
        [&] {
          for (const auto& r : recvs_)
            if (!r.pending.empty()) return false;
          return true;
        },
        deadline);
  }

  void Abort(const std::string& reason) override {
    std::lock_guard<std::mutex> lock(hub_->mu);
    auto& me = hub_->ranks[rank_];
    if (me.closed || !me.abort_reason.empty()) return;
    me.abort_reason = reason.empty() ? "aborted" : reason;
    hub_->cv.notify_all();
  }

  void Close() override {
    std::lock_guard<std::mutex> lock(hub_->mu);
    auto& me = hub_->ranks[rank_];
    if (me.closed || !me.abort_reason.empty()) return;
    if (!broken_.ok()) {
      me.abort_reason = broken_.message();
    } else {
      me.closed = true;
    }
    hub_->cv.notify_all();
  }

 private:
  // The arena's barrier, waiting like a receive.
  Status ArenaBarrier(Deadline deadline) {
    shm::Arena& arena = arena_view_->arena();
    const uint64_t step = ++barrier_step_;
    arena.Arrive(arena_view_->local_index(), step, [](int) {});  // sleepers wait on the hub's cv
    // A waiter checks under the lock: it sees the arrival, or it waits and gets the wake-up.
    { std::lock_guard<std::mutex> lock(hub_->mu); }
    hub_->cv.notify_all();
    at_barrier_ = true;
    Status s = Drive([&] { return arena.AllArrived(step); }, deadline);
    at_barrier_ = false;
    return s;
  }

  // The ranks of this host that have not reached the barrier this rank waits at.
  std::vector<int> MissingAtBarrier() const {
    std::vector<int> missing;
    if (!at_barrier_) return missing;
    const auto& locals = hub_->local_ranks.at(hub_->host(rank_));
    for (int local : arena_view_->arena().Missing(barrier_step_)) missing.push_back(locals[local]);
    return missing;
  }

  struct Pending {
    char* ptr;
    size_t bytes;
  };
  struct PeerRecvs {
    std::deque<Pending> pending;
    uint64_t posted = 0;
    uint64_t done = 0;
  };

  template <typename DoneFn>
  Status Drive(DoneFn done, Deadline deadline) {
    if (!broken_.ok()) return broken_;
    std::unique_lock<std::mutex> lock(hub_->mu);
    while (true) {
      Status s = MatchLocked();
      if (!s.ok()) return Fail(s);
      if (done()) return Status::Ok();
      s = PeerFailureLocked();
      if (!s.ok()) return Fail(s);
      hub_->ranks[rank_].waiting = true;
      auto woke = hub_->cv.wait_until(lock, deadline);
      hub_->ranks[rank_].waiting = false;
      if (woke == std::cv_status::timeout) {
        s = MatchLocked();
        if (s.ok() && done()) return Status::Ok();
        return Fail(s.ok() ? DeadlineError() : s);
      }
    }
  }

  // Moves queued messages into posted receives, in order.
  Status MatchLocked() {
    for (int peer = 0; peer < hub_->size; ++peer) {
      auto& r = recvs_[peer];
      auto& q = hub_->queue(peer, rank_);
      while (!r.pending.empty() && !q.empty()) {
        if (q.front().size() != r.pending.front().bytes)
          return Internal("rank " + std::to_string(rank_) + " expected " + std::to_string(r.pending.front().bytes) +
                          " bytes from rank " + std::to_string(peer) + " but it sent " +
                          std::to_string(q.front().size()));
        std::memcpy(r.pending.front().ptr, q.front().data(), q.front().size());
        q.pop_front();
        r.pending.pop_front();
        ++r.done;
      }
    }
    return Status::Ok();
  }

  // The first peer that died, aborted, or closed while we still expect data from it.
  Status PeerFailureLocked() const {
    if (hub_->ranks[rank_].dead) return Aborted("rank " + std::to_string(rank_) + " was killed");
    const std::vector<int> missing = MissingAtBarrier();
    for (int peer = 0; peer < hub_->size; ++peer) {
      if (peer == rank_) continue;
      const auto& st = hub_->ranks[peer];
      if (st.dead)
        return Aborted("lost rank " + std::to_string(peer) +
                       ": its connection closed without a goodbye (the process exited, crashed or was killed)");
      if (!st.abort_reason.empty()) return Aborted("rank " + std::to_string(peer) + " aborted: " + st.abort_reason);
      if (st.closed && !recvs_[peer].pending.empty())
        return Aborted("rank " + std::to_string(peer) + " closed its communicator while rank " +
                       std::to_string(rank_) + " still expected data from it");
      if (st.closed && std::find(missing.begin(), missing.end(), peer) != missing.end())
        return shm::ClosedBeforeBarrier(peer, rank_);
    }
    return Status::Ok();
  }

  Status DeadlineError() const {
    std::string waiting;
    for (int peer : MissingAtBarrier())
      waiting += std::string(waiting.empty() ? "" : "; ") + shm::NotYetAtBarrier(peer, barrier_step_);
    for (int peer = 0; peer < hub_->size; ++peer) {
      size_t bytes = 0;
      for (const auto& p : recvs_[peer].pending) bytes += p.bytes;
      if (bytes)
        waiting += std::string(waiting.empty() ? "" : "; ") + "rank " + std::to_string(peer) + " (receiving " +
                   std::to_string(bytes) + " bytes)";
    }
    std::string silent;
    for (int peer = 0; peer < hub_->size; ++peer) {
      const auto& st = hub_->ranks[peer];
      if (peer != rank_ && !st.waiting && !st.closed)
        silent += std::string(silent.empty() ? "" : ", ") + "rank " + std::to_string(peer);
    }
    if (!silent.empty()) silent = "; no sign of life from " + silent + " (stopped, hung, or busy outside collectives)";
    return Timeout("deadline passed on rank " + std::to_string(rank_) + " while waiting for " +
                   (waiting.empty() ? std::string("nothing") : waiting) + silent);
  }

  Status Fail(Status s) {
    if (broken_.ok()) broken_ = s;
    return s;
  }

  std::shared_ptr<Hub> hub_;
  const int rank_;
  std::vector<PeerRecvs> recvs_;
  Status broken_;
  std::unique_ptr<shm::ArenaView> arena_view_;  // when other ranks share this rank's host
  uint64_t barrier_step_ = 0;                   // barriers this rank arrived at
  bool at_barrier_ = false;
};

}  // namespace

Device::Device(int size, std::vector<int> hosts) : hub_(std::make_shared<Hub>(size, std::move(hosts))) {}
Device::~Device() = default;

Result<std::unique_ptr<transport::Context>> Device::Connect(int rank, int size, Store&, Deadline deadline) {
  if (size != hub_->size || rank < 0 || rank >= size)
    return InvalidArgument("in-process device for " + std::to_string(hub_->size) + " ranks cannot host rank " +
                           std::to_string(rank) + " of " + std::to_string(size));
  std::unique_lock<std::mutex> lock(hub_->mu);
  if (hub_->ranks[rank].joined) return AlreadyExists("rank " + std::to_string(rank) + " already joined");
  hub_->ranks[rank].joined = true;
  hub_->cv.notify_all();
  auto all_joined = [&] {
    for (const auto& r : hub_->ranks)
      if (!r.joined) return false;
    return true;
  };
  if (!hub_->cv.wait_until(lock, deadline, all_joined))
    return Timeout("rank " + std::to_string(rank) + " waited in vain for all " + std::to_string(size) +
                   " in-process ranks to join");
  return std::unique_ptr<transport::Context>(std::make_unique<Context>(hub_, rank));
}

void Device::Kill(int rank) {
  std::lock_guard<std::mutex> lock(hub_->mu);
  hub_->ranks[rank].dead = true;
  hub_->cv.notify_all();
}

}  // namespace shoal::collective::transport::inproc
