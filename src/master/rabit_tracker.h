// RabitTracker: the tracker XGBoost's workers talk to (the protocol of xgboost's
// tracker.py, served by the AM of an xgboost job). Workers connect, are given ranks and
// the addresses of their tree and ring neighbours, and finally say "shutdown".
//
// Contract:
//  - Start(host) binds a listening socket and serves on a thread of its own; it returns
//    the port. Ranks are assigned once `workers` workers have asked for one, in the order
//    of their task ids (DMLC_TASK_ID), so rank i is Shoal's worker i.
//  - A malformed or stalled connection (30 s without a byte) is dropped and logged; it
//    never stops the tracker. Stop() ends it at any time and joins the thread.
//  - Finished() is true once every worker has said "shutdown".
// Thread-safety: Start/Stop from the owner's thread; Finished from any thread.
#pragma once

#include <atomic>
#include <string>
#include <thread>

#include "common/status.h"

namespace shoal {

class RabitTracker {
 public:
  explicit RabitTracker(int workers) : workers_(workers) {}
  ~RabitTracker() { Stop(); }
  RabitTracker(const RabitTracker&) = delete;
  RabitTracker& operator=(const RabitTracker&) = delete;

  Result<int> Start(const std::string& host);
  void Stop();
  bool Finished() const { return finished_; }

 private:
  void Serve();

  int workers_;
  int listen_fd_ = -1;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> finished_{false};
  std::thread thread_;
};

}  // namespace shoal
