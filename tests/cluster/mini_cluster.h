// MiniCluster: Shoal in one test process, in the spirit of Mesos' cluster::Master/Slave.
// The real server core (JobManager, its SQLite history, the REST API and its token
// checks on a loopback port), real application masters and real container agents, each
// on threads of their own instead of processes, talking the real protocol over HTTP;
// only the users' programs are scripted (scripted_processes.h). A scenario takes
// milliseconds to a second, and kills and restarts are method calls.
//
// Contract:
//  - The cluster lives in a fresh home under /tmp, removed at destruction; Submit parses
//    the YAML as `shoal submit` would and submits it through the JobManager.
//  - Time is one ManualClock shared by the server core, every AM, every agent and every
//    scripted program: every sleep, timeout and timed wait of theirs goes through it.
//    WaitFor moves it forward in small steps while it looks at the job, so a scenario
//    that spans minutes of the cluster's time (heartbeat timeouts, an AM that went
//    silent) takes a fraction of a second; the HTTP between the parts is real.
//  - Faults are method calls: RestartServer() stops the HTTP server and the JobManager
//    (the AMs and agents go on, as processes would) and starts new ones over the same
//    history on a new port, writing server.json as `shoal server` does; CutAgent() and
//    HealAgent() partition a task's agent from its AM (link_proxy.h); AbandonAm() is a
//    kill -9 of an attempt's AM; mpirun() scripts what MPI jobs' mpirun does. With
//    MiniClusterOptions::home_megabytes (root only) the home is a tmpfs of that size, so
//    a test can fill the disk.
// Thread-safety: one test thread drives it.
#pragma once

#include <httplib.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/gated_http_server.h"
#include "common/http_client.h"
#include "common/json.h"
#include "common/status.h"
#include "server/job_manager.h"
#include "server/request_metrics.h"
#include "server/server_auth.h"
#include "tests/cluster/scripted_mpirun.h"
#include "tests/cluster/scripted_processes.h"

namespace shoal::testing {

class MiniBackend;
class AgentLinks;

struct MiniClusterOptions {
  int home_megabytes = 0;  // > 0: the home is a tmpfs this big (needs root)
};

class MiniCluster {
 public:
  explicit MiniCluster(const std::string& name, MiniClusterOptions options = {});
  ~MiniCluster();
  // Whether the home could be made as asked (a tmpfs needs root): tests skip otherwise.
  bool ready() const { return ready_; }

  Result<std::string> Submit(const std::string& yaml);
  // The job's detail once `done(detail)` holds, moving the cluster's clock forward by
  // kStepMillis between looks; the last detail when `cluster_millis` of the cluster's
  // time (or a minute of real time) passed first.
  static constexpr int64_t kStepMillis = 20;
  template <typename F>
  Json WaitFor(const std::string& id, F done, int64_t cluster_millis = 60'000) {
    Json detail;
    auto real_deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    for (int64_t waited = 0; waited <= cluster_millis && std::chrono::steady_clock::now() < real_deadline;
         waited += kStepMillis) {
      detail = jobs_->Get(id, 0, 0).value();
      if (done(detail)) break;
      clock_.Advance(kStepMillis);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return detail;
  }
  Json WaitForState(const std::string& id, const std::string& state, int64_t cluster_millis = 60'000) {
    return WaitFor(id, [&](const Json& d) { return d["state"] == state; }, cluster_millis);
  }
  // Moves the cluster's time forward by `millis`, in steps of `step` with a real pause
  // after each, as WaitFor does.
  void Pass(int64_t millis, int64_t step = kStepMillis);
  ManualClock& clock() { return clock_; }
  void RestartServer();
  // Cuts (heals) the link between the agent of task `task` ("w0[0]", its newest attempt's)
  // and its AM.
  void CutAgent(const std::string& task);
  void HealAgent(const std::string& task);
  // kill -9 of the AM of the job's attempt.
  void AbandonAm(const std::string& id, int attempt);
  // The scripted programs (to see which are still running).
  ScriptedProcesses& programs() { return programs_; }
  // What the AMs of MPI jobs meet as mpirun (scripted_mpirun.h).
  ScriptedMpirun& mpirun() { return mpirun_; }
  JobManager& jobs() { return *jobs_; }
  const std::string& url() const { return url_; }
  // A client of the REST API holding the administrator's token, as `shoal` on the server's machine.
  HttpJsonClient Api() const;
  const std::string& home() const { return home_; }
  std::string TaskLog(const std::string& id, int attempt, const std::string& task) const;

 private:
  void StartServer();
  void StopServer();

  std::string home_;
  bool mounted_ = false;
  bool ready_ = true;
  ManualClock clock_;
  ServerAuth auth_;
  ScriptedProcesses programs_{clock_};
  ScriptedMpirun mpirun_{clock_};
  std::unique_ptr<AgentLinks> links_;
  std::unique_ptr<MiniBackend> backend_;
  std::unique_ptr<JobStore> store_;
  std::unique_ptr<SeriesStore> series_;
  std::unique_ptr<JobManager> jobs_;
  RequestMetrics metrics_;
  std::unique_ptr<GatedHttpServer> http_;
  std::thread listener_;
  std::string url_;
};

}  // namespace shoal::testing
