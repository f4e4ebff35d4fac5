// FakeBackend: a ClusterBackend for tests. Attempts are entries in a table; the test
// ends them with Finish() and checks what was started and killed. Stall(true) makes
// PollAttempt block until Stall(false), as a slow batch system's squeue does.
// Thread-safety: every method takes the internal mutex.
#pragma once

#include <condition_variable>
#include <map>
#include <mutex>
#include <vector>

#include "backend/cluster_backend.h"

namespace shoal {

class FakeBackend final : public ClusterBackend {
 public:
  explicit FakeBackend(ClusterCapacity capacity) : capacity_(capacity) {}

  std::string name() const override { return "fake"; }
  TaskLimitsNote TaskLimits() const override { return {false, "the fake backend runs no processes"}; }
  std::vector<ClusterNode> Nodes() override { return {ClusterNode{"fake", "up", "", capacity_.total, std::nullopt}}; }
  ClusterCapacity Capacity() const override { return capacity_; }
  Result<AttemptHandle> StartAttempt(const AttemptLaunch& launch) override {
    std::lock_guard lock(mutex_);
    std::string id = launch.job_id + "/" + std::to_string(launch.attempt);
    started_.push_back(id);
    running_[id] = std::nullopt;
    return AttemptHandle{id};
  }
  std::optional<ExitInfo> PollAttempt(const AttemptHandle& handle) override {
    std::unique_lock lock(mutex_);
    if (stalled_) {
      ++stalled_polls_;
      unstalled_.notify_all();
      unstalled_.wait(lock, [this] { return !stalled_; });
    }
    auto it = running_.find(handle.backend_id);
    if (it == running_.end() || !it->second) return std::nullopt;
    ExitInfo exit = *it->second;
    running_.erase(it);
    return exit;
  }
  void KillAttempt(const AttemptLaunch& launch, const AttemptHandle& handle) override {
    std::lock_guard lock(mutex_);
    killed_.push_back(handle.backend_id);
    if (running_.count(handle.backend_id)) running_[handle.backend_id] = ExitInfo{143, 15};
  }
  void CleanUpAttempt(const AttemptLaunch&) override {}
  bool AttemptAlive(const AttemptHandle& handle) const override {
    std::lock_guard lock(mutex_);
    return alive_after_restart_;
  }
  AttemptNote Note(const AttemptHandle& handle) override {
    std::lock_guard lock(mutex_);
    auto it = notes_.find(handle.backend_id);
    return it == notes_.end() ? AttemptNote{} : it->second;
  }

  // Test controls.
  void Finish(const std::string& attempt_id, ExitInfo exit) {
    std::lock_guard lock(mutex_);
    running_[attempt_id] = exit;
  }
  std::vector<std::string> started() const {
    std::lock_guard lock(mutex_);
    return started_;
  }
  std::vector<std::string> killed() const {
    std::lock_guard lock(mutex_);
    return killed_;
  }
  void set_alive_after_restart(bool alive) { alive_after_restart_ = alive; }
  void Stall(bool stalled) {
    std::lock_guard lock(mutex_);
    stalled_ = stalled;
    unstalled_.notify_all();
  }
  // Waits until a poll is blocked in a stall.
  // Whether a poll is blocked in a stall (the scheduler reached the backend).
  bool PollStalled() {
    std::lock_guard lock(mutex_);
    return stalled_polls_ > 0;
  }
  // What the cluster says of an attempt (a batch system's reasons).
  void SetNote(const std::string& attempt_id, AttemptNote note) {
    std::lock_guard lock(mutex_);
    notes_[attempt_id] = std::move(note);
  }

 private:
  ClusterCapacity capacity_;
  mutable std::mutex mutex_;
  std::vector<std::string> started_;
  std::vector<std::string> killed_;
  std::map<std::string, std::optional<ExitInfo>> running_;
  std::map<std::string, AttemptNote> notes_;
  bool alive_after_restart_ = false;
  bool stalled_ = false;
  int stalled_polls_ = 0;
  std::condition_variable unstalled_;
};

}  // namespace shoal
