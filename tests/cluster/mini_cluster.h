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
//  - RestartServer() stops the HTTP server and the JobManager (the AMs and agents go on,
//    as processes would) and starts new ones over the same history on a new port,
//    writing server.json as `shoal server` does.
//  - Time is real (the AMs' and agents' waits are not yet behind the injectable clock).
// Thread-safety: one test thread drives it.
#pragma once

#include <httplib.h>

#include <memory>
#include <string>
#include <thread>

#include "common/json.h"
#include "common/status.h"
#include "server/job_manager.h"
#include "server/request_metrics.h"
#include "server/server_auth.h"
#include "tests/cluster/scripted_processes.h"

namespace shoal::testing {

class MiniBackend;

class MiniCluster {
 public:
  explicit MiniCluster(const std::string& name);
  ~MiniCluster();

  Result<std::string> Submit(const std::string& yaml);
  // The job's detail once `done(detail)` holds, or the last detail after timeout_ms.
  template <typename F>
  Json WaitFor(const std::string& id, F done, int timeout_ms = 10'000) {
    Json detail;
    for (int waited = 0; waited <= timeout_ms; waited += 10) {
      detail = jobs_->Get(id, 0, 0).value();
      if (done(detail)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return detail;
  }
  Json WaitForState(const std::string& id, const std::string& state, int timeout_ms = 10'000) {
    return WaitFor(id, [&](const Json& d) { return d["state"] == state; }, timeout_ms);
  }
  void RestartServer();
  JobManager& jobs() { return *jobs_; }
  const std::string& url() const { return url_; }
  const std::string& home() const { return home_; }
  std::string TaskLog(const std::string& id, int attempt, const std::string& task) const;

 private:
  void StartServer();
  void StopServer();

  std::string home_;
  ServerAuth auth_;
  ScriptedProcesses programs_;
  std::unique_ptr<MiniBackend> backend_;
  std::unique_ptr<JobStore> store_;
  std::unique_ptr<SeriesStore> series_;
  std::unique_ptr<JobManager> jobs_;
  RequestMetrics metrics_;
  std::unique_ptr<httplib::Server> http_;
  std::thread listener_;
  std::string url_;
};

}  // namespace shoal::testing
