// JobManager: the server's core. It accepts jobs, queues them, admits them whole onto
// the backend's capacity in FIFO order, starts one AM per attempt, takes the AMs'
// reports, retries failed attempts up to max_attempts, kills jobs, and keeps the job
// history current. The REST API and the tests drive it; it knows nothing of HTTP.
//
// Contract:
//  - Submit refuses (InvalidArgument, exit 2 in the CLI) a job that could never fit the
//    cluster; nothing is queued then.
//  - A job's attempt ends only when its AM has ended; then whatever is left of the
//    attempt is swept, its resources are freed, and the job is retried, finished or killed.
//  - Every change bumps the job's version and wakes Get() callers waiting on it.
//  - Start() re-attaches RUNNING jobs whose AM is still alive; attempts whose AM is gone
//    are failed ("lost when the server restarted") and retried if attempts remain.
// Thread-safety: all public methods are safe from any thread (one mutex, GUARDED_BY in
// comments); the scheduler runs on its own thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <functional>
#include <thread>

#include "backend/admission.h"
#include "backend/cluster_backend.h"
#include "common/clock.h"
#include "server/job_store.h"

namespace shoal {

class JobManager {
 public:
  JobManager(JobStore& store, ClusterBackend& backend, const Clock& clock, std::string server_url, std::string home);
  ~JobManager();

  Status Start();
  void Stop();

  Result<std::string> Submit(JobSpec spec);
  Result<Json> Kill(const std::string& id);
  // The job's detail; with wait_version > 0, waits up to wait_ms for a newer version.
  Result<Json> Get(const std::string& id, int64_t wait_version, int wait_ms);
  Result<Json> List(const JobFilter& filter);
  Json ClusterInfo();

  // For AMs.
  Result<Json> AttemptForAm(const std::string& id, int attempt);
  Status Report(const std::string& id, int attempt, const Json& report);

  // The log file of one task; attempt 0 means the latest.
  Result<std::string> LogPath(const std::string& id, int attempt, const std::string& role, int index);

 private:
  void SchedulerLoop();
  void CheckAttempts();   // REQUIRES mutex_
  void AdmitQueued();     // REQUIRES mutex_
  void EndAttempt(JobRecord& job, const ExitInfo& am_exit);  // REQUIRES mutex_
  void Changed(JobRecord& job);                              // REQUIRES mutex_
  JobRecord* FindLive(const std::string& id);                // REQUIRES mutex_
  AttemptLaunch LaunchFor(const JobRecord& job) const;
  void Release(const std::string& id);                       // REQUIRES mutex_
  void RunInBackground(std::function<void()> work);  // REQUIRES mutex_

  JobStore& store_;
  ClusterBackend& backend_;
  const Clock& clock_;
  const std::string server_url_;
  const std::string home_;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, JobRecord> live_;            // GUARDED_BY(mutex_)
  std::deque<std::string> queue_;                    // GUARDED_BY(mutex_)
  std::map<std::string, AttemptHandle> handles_;     // GUARDED_BY(mutex_)
  std::map<std::string, Admission> reserved_;        // GUARDED_BY(mutex_)
  Resources free_;                                   // GUARDED_BY(mutex_)
  std::set<int> free_gpus_;                          // GUARDED_BY(mutex_)
  bool stopping_ = false;                            // GUARDED_BY(mutex_)
  std::thread scheduler_;
  int background_running_ = 0;                       // GUARDED_BY(mutex_)
};

}  // namespace shoal
