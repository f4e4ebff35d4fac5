// ApplicationMaster: runs one job attempt. It fetches the attempt from the server,
// launches one container per task through the backend's ContainerLauncher, serves the
// agents' protocol (protocol/task_messages.h), computes each task's launch plan once
// every task has registered (runtime/launch_plan.h), applies the failure policy, and
// reports the attempt to the server (protocol/attempt_messages.h). For XGBoost jobs it
// also serves the Rabit tracker.
//
// Credentials: the attempt's token (from the backend, in kAttemptTokenVariable, removed
// from the environment at once) is the AM's only credential towards the server, and the
// server proves itself with it when it asks for stacks. Each agent gets its task's token
// and nothing else; agents and mpirun inherit only common/inherited_environment.h's list.
// When the server stops answering, the AM re-reads the server's server.json and follows a
// server that restarted on another port.
//
// Contract:
//  - Run() returns the process exit code once the attempt is over and every container
//    has ended; the final report has reached the server (or the server stayed
//    unreachable for the report timeout).
//  - RequestKill() may be called from a signal-watching thread: the attempt ends KILLED.
//    RequestFail() likewise ends it FAILED with its reason (the cluster is about to end
//    it: Slurm's time-limit warning), so the server's retry rules apply. Either way every
//    task is stopped: SIGTERM, then SIGKILL after the grace.
//  - Abandon() is what kill -9 does to an AM process, for the in-process mini cluster
//    (tests/cluster): the AM stops serving at once and Run() returns 137 with no
//    container stopped and no final report sent.
//  - Scale: a report carries every task, so a job of N tasks reports its tasks' progress
//    and samples at most every min(N/10, 1000) ms; a change of the attempt's state is
//    reported at once. The cluster tasks are planned from is built once (per registration).
// Thread-safety: HTTP handlers and the loop share the tracker under one mutex.
#pragma once

#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "backend/cluster_backend.h"
#include "common/clock.h"
#include "common/gated_http_server.h"
#include "common/http_client.h"
#include "common/process.h"
#include "data/data_plan.h"
#include "data/save_tracker.h"
#include "master/attempt_tracker.h"
#include "master/stack_requests.h"
#include "master/task_tokens.h"
#include "master/rabit_tracker.h"

namespace shoal {

struct AmOptions {
  std::string server_url;
  std::string server_info_path;  // <home>/server.json: a restarted server's new address
  std::string attempt_token;     // the attempt's own token (am_command reads it from kAttemptTokenVariable)
  std::string job_id;
  int attempt = 1;
  std::string attempt_dir;
  std::string bind_host = "127.0.0.1";
  std::string shoal_executable;
  int heartbeat_interval_ms = 1000;
  int stop_grace_ms = 5000;
};

class ApplicationMaster {
 public:
  // `processes` starts and watches mpirun for MPI jobs (the tasks go through `launcher`).
  ApplicationMaster(AmOptions options, ContainerLauncher& launcher, const Clock& clock,
                    ProcessLauncher& processes = RealProcessLauncher::Instance());
  ~ApplicationMaster();
  int Run();
  void RequestKill(const std::string& reason);
  void RequestFail(const std::string& reason);
  // The cluster preempts the attempt (Slurm's preemption, seen by the AM's SIGTERM): as the
  // server's preemption, its tasks have the job's preemption_grace to checkpoint.
  void RequestPreempt(const std::string& reason);
  void Abandon();

 private:
  // Stops serving and ends every long poll and the loop (Abandon, the destructor).
  void Close();
  // An attempt after the first of a job with checkpoints: picks the round its tasks
  // resume from (data/checkpoints.h) into resume_round_.
  Status PrepareCheckpoints();
  Status FetchAttempt();
  Status StartServer();
  Status StartFrameworkServices();
  // MPI jobs: start mpirun once every task has registered; watch it.
  void DriveMpirun();  // REQUIRES mutex_
  Result<Json> HandleMpiCommand(const httplib::Request& req);
  Result<Json> HandleMpiWait(const httplib::Request& req);
  bool RunsBoard(const std::string& role, int index) const;
  void LaunchContainers();
  void Loop();
  void Report(bool final_report);
  void InstallRoutes();
  Result<Json> HandleCluster(const httplib::Request& req);
  // The cluster every task's plan is made from, built once per registration. REQUIRES mutex_.
  std::shared_ptr<const ClusterView> ClusterNow();
  // Whether a report of changed tasks may go now (big jobs space them). REQUIRES mutex_.
  bool ReportMayGo() const;
  // Whether the request carries the token of the task it names. REQUIRES mutex_.
  Status CheckTaskToken(const httplib::Request& req, const protocol::TaskId& task) const;
  // `shoal stack`: asks every running task for its stacks, waits for the answers.
  Result<Json> HandleStackRequest();

  AmOptions options_;
  ContainerLauncher& launcher_;
  const Clock& clock_;
  ProcessLauncher& processes_;
  HttpJsonClient server_;
  JobSpec spec_;
  std::vector<std::vector<int>> task_gpus_;
  std::unique_ptr<AttemptTracker> tracker_;
  std::optional<data::DataPlan> data_plan_;      // each task's inputs and outputs
  int resume_round_ = 0;                         // the checkpoint round this attempt resumes from
  std::unique_ptr<data::SaveTracker> saves_;     // Save Model requests; GUARDED_BY(mutex_)
  std::unique_ptr<GatedHttpServer> http_;  // made by StartServer, sized for the job's tasks
  std::thread listener_;                 // serves http_ until the AM closes
  std::atomic<bool> closing_{false};     // abandoned or being destroyed: every long poll ends
  std::string am_addr_;
  std::map<std::string, std::string> services_;  // framework endpoints the AM serves
  std::unique_ptr<RabitTracker> rabit_tracker_;
  pid_t mpirun_pid_ = 0;                  // GUARDED_BY(mutex_)
  bool mpirun_ended_ = false;             // GUARDED_BY(mutex_)
  std::map<int, std::string> mpi_orted_;  // rank -> orted command; GUARDED_BY(mutex_)
  StackRequests stack_requests_;          // GUARDED_BY(mutex_)
  TaskTokens tokens_;                     // the attempt's secrets; immutable once Run() made them
  std::string attempt_token_;             // this attempt's token, from the server
  // Re-reads server.json; switches server_ when the server now listens elsewhere.
  bool FollowServer();
  std::mutex mutex_;
  std::condition_variable changed_;
  std::atomic<bool> kill_requested_{false};
  bool wake_ = false;  // an agent exited: the loop polls at once; GUARDED_BY(mutex_)
  void Wake();
  // Every task registered, the attempt ended or the AM is closing: parked cluster polls
  // may go (master/cluster_polls.h); wakes them the first time. REQUIRES mutex_.
  void PublishClusterSettled();
  std::atomic<bool> cluster_settled_{false};
  std::string kill_reason_;
  bool kill_fails_ = false;  // RequestFail: the attempt ends FAILED, not KILLED; GUARDED_BY(mutex_)
  void RequestEnd(const std::string& reason, bool fails);
  int64_t reported_version_ = 0;
  AttemptState reported_state_ = AttemptState::kStarting;  // GUARDED_BY(mutex_)
  std::shared_ptr<const ClusterView> cluster_;              // GUARDED_BY(mutex_)
  int64_t cluster_registrations_ = -1;                      // GUARDED_BY(mutex_)
  std::vector<TaskSeries> unreported_series_;  // kept until a report carrying it succeeds
  int64_t last_report_ms_ = 0;
};

}  // namespace shoal
