#include "bench/scale/simulated_agents.h"

#include <algorithm>
#include <chrono>

#include "bench/scale/launch_pipe.h"
#include "common/http_client.h"
#include "protocol/task_messages.h"

namespace shoal::bench {
namespace {

using namespace protocol;

int64_t SteadyMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double MillisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

struct SimulatedAgents::Task {
  enum class Phase { kNew, kRegistered, kRunning, kDone };
  std::string id;
  TaskId task;
  HttpJsonClient am;
  HttpJsonClient heartbeats;  // kept alive, as `shoal container` keeps its heartbeats' connection
  int am_fd = -1;
  Phase phase = Phase::kNew;
  int64_t next_beat_ms = 0;
  double progress = 0;
  double last_rtt_ms = -1;
  std::atomic<bool> stop{false};
  std::atomic<bool> told{false};
  std::atomic<int> fail_code{0};
  Task(std::string id_, TaskId task_, const std::string& am_addr, const std::string& token, int fd)
      : id(std::move(id_)), task(std::move(task_)), am("http://" + am_addr, 10'000),
        heartbeats("http://" + am_addr, 10'000), am_fd(fd) {
    am.set_bearer_token(token);
    heartbeats.set_bearer_token(token);
    heartbeats.KeepAlive();
  }
};

struct SimulatedAgents::Lane {
  std::mutex mutex;
  std::vector<std::unique_ptr<Task>> inbox;  // GUARDED_BY(mutex)
  std::vector<double> latencies;             // GUARDED_BY(mutex)
  std::vector<std::unique_ptr<Task>> tasks;  // the lane's thread only
  std::thread thread;
};

SimulatedAgents::SimulatedAgents(int threads, int expected, int heartbeat_ms)
    : expected_(expected), heartbeat_ms_(heartbeat_ms) {
  for (int i = 0; i < threads; ++i) lanes_.push_back(std::make_unique<Lane>());
  for (auto& lane : lanes_) lane->thread = std::thread([this, raw = lane.get()] { Run(*raw); });
}

SimulatedAgents::~SimulatedAgents() {
  quit_ = true;
  for (auto& lane : lanes_) lane->thread.join();
}

void SimulatedAgents::Launch(const std::string& id, const std::string& role, int index, const std::string& token,
                             const std::string& am_addr, int am_fd) {
  auto task = std::make_unique<Task>(id, TaskId{role, index}, am_addr, token, am_fd);
  {
    std::lock_guard lock(mutex_);
    by_id_[id] = task.get();
    by_name_[task->task.Name()] = task.get();
  }
  Lane& lane = *lanes_[static_cast<size_t>(launched_.fetch_add(1)) % lanes_.size()];
  std::lock_guard lock(lane.mutex);
  lane.inbox.push_back(std::move(task));
}

void SimulatedAgents::Stop(const std::string& id) {
  std::lock_guard lock(mutex_);
  if (auto it = by_id_.find(id); it != by_id_.end()) {
    Tell(*it->second);
    it->second->stop = true;
  }
}

void SimulatedAgents::Fail(const std::string& role, int index, int exit_code) {
  std::lock_guard lock(mutex_);
  if (auto it = by_name_.find(TaskId{role, index}.Name()); it != by_name_.end()) it->second->fail_code = exit_code;
}

void SimulatedAgents::Tell(Task& task) {
  if (task.told.exchange(true)) return;
  int64_t now = SteadyMillis();
  int64_t last = last_told_ms_;
  while (now > last && !last_told_ms_.compare_exchange_weak(last, now)) {
  }
  ++told_;
}

std::vector<double> SimulatedAgents::HeartbeatMillis() const {
  std::vector<double> all;
  for (const auto& lane : lanes_) {
    std::lock_guard lock(lane->mutex);
    all.insert(all.end(), lane->latencies.begin(), lane->latencies.end());
  }
  return all;
}

void SimulatedAgents::Exit(Task& task, int exit_code, int signal, bool terminated) {
  ExitRequest request{task.task, ExitInfo{exit_code, signal}, terminated ? "" : "the simulated program failed", terminated};
  if (!terminated) failure_sent_ms_ = SteadyMillis();
  auto reply = task.am.Post(kExitedPath, Encode(request), 5000);
  if (!reply.ok()) ++errors_;
  if (!terminated) failure_reported_ms_ = SteadyMillis();
  (void)WriteLine(task.am_fd, "ended " + task.id + " 0 0");
  task.phase = Task::Phase::kDone;
  ++ended_;
}

bool SimulatedAgents::Turn(Task& task, bool may_wait, Lane& lane) {
  using Phase = Task::Phase;
  if (task.phase == Phase::kDone) return false;
  if (task.stop) {
    Exit(task, 0, 15, true);  // its program got SIGTERM
    return true;
  }
  if (int code = task.fail_code.exchange(0)) {
    Exit(task, code, 0, false);
    return true;
  }
  switch (task.phase) {
    case Phase::kNew: {
      RegisterRequest request{task.task, "127.0.0.1", {20'000 + task.task.index % 40'000}, std::nullopt, 0};
      auto reply = task.am.Post(kRegisterPath, Encode(request), 10'000);
      if (!reply.ok()) {
        ++errors_;
        return false;
      }
      task.phase = Phase::kRegistered;
      ++registered_;
      return true;
    }
    case Phase::kRegistered: {
      if (!may_wait) return false;
      auto reply = task.am.Get(kClusterPath + EncodeQuery(WaitQuery{task.task, 5000}), 15'000);
      auto cluster = reply.ok() ? Decode<ClusterReply>(*reply) : Result<ClusterReply>(reply.status());
      if (!cluster.ok()) {
        ++errors_;
        return false;
      }
      if (!cluster->ready) return false;
      auto started = task.am.Post(kStartedPath, Encode(StartedRequest{task.task, 1000 + task.task.index, ""}), 5000);
      if (!started.ok()) ++errors_;
      task.phase = Phase::kRunning;
      // The fleet's heartbeats spread over the interval, as agents that started apart do.
      task.next_beat_ms = SteadyMillis() + heartbeat_ms_ * (task.task.index % 1000) / 1000;
      ++running_;
      return true;
    }
    case Phase::kRunning: {
      int64_t now = SteadyMillis();
      if (now < task.next_beat_ms) return false;
      task.next_beat_ms = std::max(task.next_beat_ms + heartbeat_ms_, now);
      task.progress = std::min(1.0, task.progress + 0.001);
      HeartbeatRequest beat;
      beat.task = task.task;
      beat.progress = task.progress;
      beat.sample = ResourceSample{.t = now, .cpu = 95.0, .rss = 512LL << 20, .progress = task.progress};
      beat.rtt_ms = task.last_rtt_ms;
      auto start = std::chrono::steady_clock::now();
      auto reply = task.heartbeats.Post(kHeartbeatPath, Encode(beat), 5000);
      auto decoded = reply.ok() ? Decode<HeartbeatReply>(*reply) : Result<HeartbeatReply>(reply.status());
      task.last_rtt_ms = MillisSince(start);
      ++heartbeats_;
      if (!decoded.ok()) {
        ++errors_;
        return true;
      }
      if (recording_) {
        std::lock_guard lock(lane.mutex);
        lane.latencies.push_back(task.last_rtt_ms);
      }
      if (!decoded->keep_running) {
        Tell(task);
        task.stop = true;
      }
      return true;
    }
    case Phase::kDone:
      return false;
  }
  return false;
}

void SimulatedAgents::Run(Lane& lane) {
  while (!quit_) {
    {
      std::lock_guard lock(lane.mutex);
      for (auto& task : lane.inbox) lane.tasks.push_back(std::move(task));
      lane.inbox.clear();
    }
    bool all_launched = launched_ == expected_;
    bool mine_registered = std::none_of(lane.tasks.begin(), lane.tasks.end(),
                                        [](const auto& t) { return t->phase == Task::Phase::kNew; });
    bool did = false;
    for (auto& task : lane.tasks) did = Turn(*task, all_launched && mine_registered, lane) || did;
    if (!did) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

}  // namespace shoal::bench
