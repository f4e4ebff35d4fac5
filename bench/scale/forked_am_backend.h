// ForkedAmBackend: bench_scale's cluster. Each attempt's AM is a process of its own,
// `<bench_scale> am ...` (am_process.h), whose containers are SimulatedAgents in this
// process, wired through two pipes (launch_pipe.h). The AM is reaped with wait4, so its
// CPU time and peak RSS are the kernel's account of that process alone.
//
// Contract:
//  - StartAttempt spawns the AM (its log: <attempt dir>/am.log) and a thread relaying its
//    launches and stops to the agents; PollAttempt reports its exit once reaped.
//  - KillAttempt sends the AM SIGTERM (shoal kill's signal) and returns once it has
//    exited: the AM has stopped every container first.
//  - Usage() reads the newest AM's CPU seconds and peak RSS: from /proc while it runs,
//    from wait4's rusage once it has ended.
// Thread-safety: every method is safe from any thread.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "backend/cluster_backend.h"
#include "bench/scale/simulated_agents.h"

namespace shoal::bench {

struct AmUsage {
  pid_t pid = 0;
  double cpu_seconds = 0;
  int64_t peak_rss_bytes = 0;
  bool ended = false;
};

class ForkedAmBackend final : public ClusterBackend {
 public:
  ForkedAmBackend(SimulatedAgents& agents, std::string self, int heartbeat_ms, int tasks);
  ~ForkedAmBackend() override;

  std::string name() const override { return "local"; }
  TaskLimitsNote TaskLimits() const override { return {false, "bench_scale's tasks are simulated"}; }
  std::vector<ClusterNode> Nodes() override { return {ClusterNode{"sim", "up", "", Capacity().total, std::nullopt}}; }
  ClusterCapacity Capacity() const override;
  Result<AttemptHandle> StartAttempt(const AttemptLaunch& launch) override;
  std::optional<ExitInfo> PollAttempt(const AttemptHandle& handle) override;
  void KillAttempt(const AttemptLaunch& launch, const AttemptHandle& handle) override;
  void CleanUpAttempt(const AttemptLaunch&) override {}
  bool AttemptAlive(const AttemptHandle& handle) const override;
  void SetChangeCallback(std::function<void()> changed) override { changed_ = std::move(changed); }

  AmUsage Usage() const;

 private:
  struct Am {
    pid_t pid = 0;
    int to_am = -1;    // the AM's fd 4
    int from_am = -1;  // the AM's fd 3
    std::thread relay;
    std::thread reaper;
    std::optional<ExitInfo> exit;  // GUARDED_BY(mutex_)
    AmUsage usage;                 // set when reaped; GUARDED_BY(mutex_)
  };

  SimulatedAgents& agents_;
  const std::string self_;
  const int heartbeat_ms_;
  const int tasks_;
  mutable std::mutex mutex_;
  std::condition_variable ended_;
  std::map<std::string, std::unique_ptr<Am>> ams_;  // GUARDED_BY(mutex_)
  Am* newest_ = nullptr;                            // GUARDED_BY(mutex_)
  std::function<void()> changed_;
};

}  // namespace shoal::bench
