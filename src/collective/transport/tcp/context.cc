#include "collective/transport/tcp/context.h"

#include <sched.h>

#include <cerrno>

namespace shoal::collective::transport::tcp {
namespace {
constexpr auto kProbeWindow = std::chrono::milliseconds(200);
}  // namespace

Context::Context(int rank, int size, std::vector<std::unique_ptr<Pair>> pairs, Spin spin,
                 std::unique_ptr<shm::Segment> segment, std::vector<int> hosts)
    : rank_(rank),
      size_(size),
      spin_(spin.total),
      poll_only_(spin.poll_only),
      hosts_(std::move(hosts)),
      segment_(std::move(segment)),
      pairs_(std::move(pairs)) {
  if (segment_)
    arena_view_ = std::make_unique<shm::ArenaView>(segment_->arena(), segment_->LocalIndex(rank_),
                                                   [this](Deadline deadline) { return ArenaBarrier(deadline); });
}

Context::~Context() { Close(); }

Request Context::PostSend(int peer, const void* data, size_t bytes) {
  if (bytes == 0) return Request{peer, true, 0};
  return Request{peer, true, pairs_[peer]->PostSend(data, bytes)};
}

Request Context::PostRecv(int peer, void* data, size_t bytes) {
  if (bytes == 0) return Request{peer, false, 0};
  return Request{peer, false, pairs_[peer]->PostRecv(data, bytes)};
}

Status Context::Wait(const Request& req, Deadline deadline) {
  if (req.seq == 0) return broken_;
  Pair* pair = pairs_[req.peer].get();
  return Drive([&] { return req.is_send ? pair->SendDone(req.seq) : pair->RecvDone(req.seq); }, deadline);
}

Status Context::WaitAll(Deadline deadline) {
  return Drive(
      [&] {
        for (const auto& p : pairs_)
          if (p && !p->idle()) return false;
        return true;
      },
      deadline);
}

Status Context::ArenaBarrier(Deadline deadline) {
  shm::Arena& arena = arena_view_->arena();
  const uint64_t step = ++arena_steps_;
  arena.Arrive(arena_view_->local_index(), step,
               [&](int sleeper) { pairs_[segment_->RankOf(sleeper)]->RingDoorbell(); });
  in_arena_barrier_ = true;
  Status s = Drive([&] { return arena.AllArrived(step); }, deadline);
  in_arena_barrier_ = false;
  return s;
}

template <typename DoneFn>
Status Context::Drive(DoneFn done, Deadline deadline) {
  if (!broken_.ok()) return broken_;
  if (closed_) return FailedPrecondition("transport context of rank " + std::to_string(rank_) + " is closed");
  // The clock is read only while nothing moves: a quiet spell starts at the first
  // fruitless turn and ends with any progress.
  bool quiet = false;
  Clock::time_point quiet_since;
  while (true) {
    bool progressed = false;
    for (auto& p : pairs_) {
      if (p && !p->idle()) {
        Status s = p->Progress(&progressed);
        if (!s.ok()) return Fail(s);
      }
    }
    if (done()) return Status::Ok();
    if (progressed) {
      quiet = false;
      continue;
    }
    const auto now = Clock::now();
    if (!quiet) {
      quiet = true;
      quiet_since = now;
    }
    if (now < quiet_since + spin_) {
      // Let a peer that shares this CPU run: loopback wake-ups tend to pull ranks
      // onto one CPU, and spinning there would only delay the data we wait for.
      // The first microseconds poll memory only: a peer on its own core answers a
      // small shared-memory message faster than a system call returns.
      if (now - quiet_since < poll_only_) {
        __builtin_ia32_pause();
        continue;
      }
      sched_yield();
      continue;
    }
    if (now >= deadline) return Fail(DeadlineError(probed_for_ == deadline));
    if (now >= deadline - kProbeWindow && probed_for_ != deadline) {
      probed_for_ = deadline;
      for (auto& p : pairs_)
        if (p) p->SendProbe();
    }
    Status s = Block(now < deadline - kProbeWindow ? deadline - kProbeWindow : deadline);
    if (!s.ok()) return Fail(s);
  }
}

Status Context::Block(Deadline deadline) {
  // Shared-memory pairs raise their asleep flags first; one that can move now
  // (data arrived after the last look) means there is nothing to sleep for.
  bool may_sleep = true;
  for (auto& p : pairs_)
    if (p && !p->idle()) may_sleep &= p->ArmForSleep();
  // In an arena barrier, an arriving rank rings the doorbell of a rank whose flag is up.
  if (may_sleep && in_arena_barrier_)
    may_sleep = arena_view_->arena().ArmSleep(arena_view_->local_index(), arena_steps_);
  if (!may_sleep) return Status::Ok();
  fds_.clear();
  fd_owner_.clear();
  for (auto& p : pairs_) {
    if (!p) continue;
    size_t n = p->PreparePoll(&fds_, in_arena_barrier_);
    fd_owner_.insert(fd_owner_.end(), n, p.get());
  }
  auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline - Clock::now()).count();
  int timeout_ms = static_cast<int>(std::min<int64_t>(std::max<int64_t>(0, (left + 999) / 1000), 1 << 30));
  int rc = ::poll(fds_.data(), fds_.size(), timeout_ms);
  if (in_arena_barrier_) arena_view_->arena().Disarm(arena_view_->local_index());
  if (rc < 0 && errno != EINTR) return Internal("poll failed: " + ErrnoText(errno));
  // Control traffic is rare: only look at it when poll says something arrived.
  Pair* last = nullptr;
  for (size_t i = 0; rc > 0 && i < fds_.size(); ++i) {
    if (fds_[i].revents == 0 || fd_owner_[i] == last) continue;
    last = fd_owner_[i];
    RETURN_IF_ERROR(fd_owner_[i]->ReadControl());
  }
  // A local rank that closed before reaching the barrier never will.
  for (int local : in_arena_barrier_ ? arena_view_->arena().Missing(arena_steps_) : std::vector<int>{}) {
    const int peer = segment_->RankOf(local);
    if (pairs_[peer] && pairs_[peer]->said_goodbye())
      return shm::ClosedBeforeBarrier(peer, rank_);
  }
  return Status::Ok();
}

Status Context::DeadlineError(bool probed) const {
  std::string waiting;
  for (const auto& p : pairs_) {
    if (!p || p->idle()) continue;
    waiting += std::string(waiting.empty() ? "" : "; ") + "rank " + std::to_string(p->peer()) + " (" +
               p->PendingText() + ")";
  }
  if (in_arena_barrier_)
    for (int local : arena_view_->arena().Missing(arena_steps_))
      waiting += std::string(waiting.empty() ? "" : "; ") + shm::NotYetAtBarrier(segment_->RankOf(local), arena_steps_);
  std::string silent;
  for (const auto& p : pairs_)
    if (probed && p && !p->answered_probe()) silent += std::string(silent.empty() ? "" : ", ") + "rank " + std::to_string(p->peer());
  if (!silent.empty()) silent = "; no sign of life from " + silent + " (stopped, hung, or busy outside collectives)";
  return Timeout("deadline passed on rank " + std::to_string(rank_) + " while waiting for " +
                 (waiting.empty() ? std::string("nothing") : waiting) + silent);
}

Status Context::Fail(Status s) {
  if (broken_.ok()) broken_ = s;
  return s;
}

void Context::Abort(const std::string& reason) {
  if (closed_) return;
  closed_ = true;
  for (auto& p : pairs_) {
    if (!p) continue;
    p->SendAbort(reason);
    p->CloseAll();
  }
}

void Context::Close() {
  if (closed_) return;
  if (!broken_.ok()) return Abort(broken_.message());
  closed_ = true;
  for (auto& p : pairs_) {
    if (!p) continue;
    p->SendGoodbye();
    p->CloseAll();
  }
}

}  // namespace shoal::collective::transport::tcp
