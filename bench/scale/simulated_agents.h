// SimulatedAgents: bench_scale's container agents. Each launched task is a few fields, not
// a process: a small pool of threads speaks the real agent protocol
// (protocol/task_messages.h) to the real AM over real HTTP for every task, as
// `shoal container` does: register, the cluster long poll, started, a heartbeat every
// heartbeat interval (with a resource sample and progress), and the exit report.
//
// Contract:
//  - Launch() hands a task to one of the threads (round robin); the AM's launcher calls
//    it, and Stop() when the AM stops a container. A task told to stop, by Stop() or by a
//    heartbeat reply with keep_running false, reports its exit (terminated) and then its
//    container's end on `am_fd` ("ended ..." of launch_pipe.h).
//  - A thread long-polls the cluster only once all `expected` tasks were launched and its
//    own are registered; the real fleet holds one poll per task at once, this holds one
//    per thread (the AM serves both the same way).
//  - Fail(role, index, code) makes that task's program "exit" with `code` at its next turn.
//  - Heartbeat round trips (from the request to the decoded reply, as the agent sees
//    them) are kept while recording is on.
// Thread-safety: every public method is safe from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace shoal::bench {

class SimulatedAgents {
 public:
  SimulatedAgents(int threads, int expected, int heartbeat_ms);
  ~SimulatedAgents();

  void Launch(const std::string& id, const std::string& role, int index, const std::string& token,
              const std::string& am_addr, int am_fd);
  void Stop(const std::string& id);
  void Fail(const std::string& role, int index, int exit_code);

  int launched() const { return launched_; }
  int registered() const { return registered_; }
  int running() const { return running_; }
  int told_to_stop() const { return told_; }
  int ended() const { return ended_; }
  // steady_clock milliseconds (since its epoch) of the last task's first stop notice.
  int64_t last_told_ms() const { return last_told_ms_; }
  // When Fail()'s exit report was sent (its thread's turn came) and answered by the AM
  // (steady ms; 0: not yet).
  int64_t failure_sent_ms() const { return failure_sent_ms_; }
  int64_t failure_reported_ms() const { return failure_reported_ms_; }
  int64_t heartbeats() const { return heartbeats_; }
  int64_t errors() const { return errors_; }

  void Record(bool on) { recording_ = on; }
  std::vector<double> HeartbeatMillis() const;

 private:
  struct Task;
  struct Lane;
  void Run(Lane& lane);
  // One turn of `task`: the next protocol step that is due; false when nothing was.
  bool Turn(Task& task, bool may_wait, Lane& lane);
  void Tell(Task& task);
  void Exit(Task& task, int exit_code, int signal, bool terminated);

  const int expected_;
  const int heartbeat_ms_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Task*> by_id_;    // GUARDED_BY(mutex_)
  std::unordered_map<std::string, Task*> by_name_;  // "role[index]"; GUARDED_BY(mutex_)
  std::atomic<bool> quit_{false};
  std::atomic<bool> recording_{false};
  std::atomic<int> launched_{0}, registered_{0}, running_{0}, told_{0}, ended_{0};
  std::atomic<int64_t> last_told_ms_{0}, failure_sent_ms_{0}, failure_reported_ms_{0}, heartbeats_{0}, errors_{0};
};

}  // namespace shoal::bench
