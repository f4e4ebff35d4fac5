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
//  - Report applies an AM's report (protocol/attempt_messages.h) all or nothing: the task
//    views, the series (appended to the SeriesStore, never to the job's row), the
//    board URL and saved-model states; its reply lists the save requests still pending.
//  - SaveModel records a save request on the running attempt (409 when not running).
//  - Start() re-attaches RUNNING jobs whose AM is still alive; attempts whose AM is gone
//    are failed ("lost when the server restarted") and retried if attempts remain.
//  - When an attempt ends, no task of it is left RUNNING: a task its AM did not see end
//    is LOST ("the application master ended before this task did"), or KILLED when the
//    job was killed.
//  - A record the history cannot take (a full disk) stays in memory, is shown as it is by
//    Get and List, and is written again at every pass until it is written; the error is
//    logged once. At Recover, attempt folders the history does not know (an attempt whose
//    record was lost) are renamed, never reused: a new attempt never writes over them.
//  - No lock is held across a backend call (squeue, sbatch, a process start) or the job
//    history's I/O: a scheduler pass polls the backend and starts attempts outside the
//    mutex, and changed records are written after it is released (Flush), in the order
//    they changed. A slow backend delays only the scheduler, never the API or the AMs.
//  - Step() is one scheduler pass; Start() runs passes on a thread of its own (woken by
//    every change, and at least every 20 ms for backends that must be polled). Tests call
//    Recover() and then Step() themselves.
// Thread-safety: all public methods are safe from any thread (one mutex, GUARDED_BY in
// comments); Step() is called by one thread at a time.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <functional>
#include <thread>

#include "scheduling/queue_config.h"
#include "scheduling/queue_credit.h"
#include "scheduling/schedule_policy.h"
#include "backend/cluster_backend.h"
#include "common/clock.h"
#include "server/histogram.h"
#include "server/job_store.h"
#include "server/series_store.h"
#include "server/task_page.h"
#include "protocol/attempt_messages.h"

namespace shoal {

// What GET /metrics shows of the jobs.
struct JobMetrics {
  std::map<std::string, int64_t> jobs_by_state;   // the whole history
  std::map<std::string, int64_t> tasks_by_state;  // the tasks of running jobs' latest attempts
  int64_t queue_length = 0;
  int64_t scheduler_passes = 0;                   // scheduler passes completed since the server started
  HistogramSnapshot heartbeat_rtt;                // seconds, one observation per task per report
};

class JobManager {
 public:
  JobManager(JobStore& store, SeriesStore& series, ClusterBackend& backend, const Clock& clock, std::string server_url,
             std::string home);
  ~JobManager();

  // Loads the unfinished jobs and re-attaches the running ones (Recover), then starts
  // the scheduler thread.
  Status Start();
  Status Recover();
  void Stop();
  // One scheduler pass: polls the running attempts, ends those that ended, admits queued
  // jobs and starts their attempts.
  void Step();
  // How many scheduler passes have completed: what a test waits on for "the scheduler has
  // looked at the queue since" instead of sleeping.
  int64_t passes() const { return passes_.load(); }
  // A preempted attempt whose AM was told (protocol::PreemptNotice) is killed once its
  // grace, the upload allowance and this margin are over.
  static constexpr int64_t kPreemptKillMarginMs = 30'000;

  Result<std::string> Submit(JobSpec spec);
  Result<Json> Kill(const std::string& id);
  // The job's detail; with wait_version > 0, waits up to wait_ms for a newer version.
  // With `tasks`, only that page of the latest attempt's tasks (server/task_page.h).
  Result<Json> Get(const std::string& id, int64_t wait_version, int wait_ms, const TaskPageQuery* tasks = nullptr);
  // Whether a Get() waiting on `version` would return now: the job has a newer version,
  // is not live (ended and stored, or unknown), or the manager is stopping. Quick: the
  // server's connection gate asks it for each parked long poll after each change.
  bool HasNewerThan(const std::string& id, int64_t version);
  // Called after every change a waiting Get() could see, with the manager's lock held:
  // it must not block or call back into the manager. Set before Start().
  void set_change_listener(std::function<void()> listener) { change_listener_ = std::move(listener); }
  Result<Json> List(const JobFilter& filter);
  Json ClusterInfo();
  // The queues as configured (queues.yaml, re-read when it changed) with each one's use:
  // {"queues": [{name, guarantee, max, user_limit, used, share, borrowing, running,
  // waiting: [ids]}], "capacity", "max_wait_ms", "file", "error"}.
  Json Queues();
  // What the backend offers (for the submission check).
  ClusterCapacity Capacity() const { return backend_.Capacity(); }
  // The server's home: its state (the history, the tokens, the jobs' logs).
  const std::string& home() const { return home_; }
  Result<JobMetrics> Metrics();
  // Records a save request on the running attempt; returns the new saved-model entry.
  Result<Json> SaveModel(const std::string& id);
  // One attempt's series (attempt 0: the latest), only what arrived after `after`:
  // {"attempt", "tasks": [{role, index, samples, metrics}], "next": {sample, point}}.
  Result<Json> Series(const std::string& id, int attempt, SeriesCursor after);

  // For AMs. The reply: {"save_requests": [{name, requested_ms}]} still pending.
  Result<Json> AttemptForAm(const std::string& id, int attempt);
  Result<Json> Report(const std::string& id, int attempt, protocol::AttemptReport report);
  // How attempts' tokens are made (ServerAuth::AttemptToken); set before Start(). Without
  // it AMs get no token (tests whose AMs never call the server).
  void set_attempt_tokens(std::function<std::string(const std::string&, int)> tokens) { attempt_tokens_ = std::move(tokens); }
  // The Unix account each job runs as (JobAccounts::AccountFor): asked at submit, where
  // an error refuses the job, and again as each attempt starts (an error fails it). Without
  // it every job runs as the server. Set before Start().
  void set_accounts(std::function<Result<std::string>(const JobSpec&)> accounts) { accounts_ = std::move(accounts); }
  // How the images a spec names become root file systems (ImageStore::Resolve): at
  // submit, after every other check, filling the spec's ImageSpecs; an error refuses the
  // job. Without it a spec naming an image is refused. Set before Start().
  void set_images(std::function<Status(JobSpec&)> images) { images_ = std::move(images); }
  // Where attempts' folders are made (<jobs dir>/<job>/attempt-N); default <home>/jobs.
  void set_jobs_dir(std::string dir) { jobs_dir_ = std::move(dir); }

  // The log file of one task; attempt 0 means the latest.
  Result<std::string> LogPath(const std::string& id, int attempt, const std::string& role, int index);

 private:
  void SchedulerLoop();
  struct Polled {
    std::string id;
    AttemptHandle handle;
    std::optional<ExitInfo> exit;
    AttemptNote note;
  };
  void ApplyPolls(const std::vector<Polled>& polled);  // REQUIRES mutex_
  // Admits what fits now: records the new attempts and reserves their resources; the
  // caller starts them outside the mutex.
  std::vector<std::string> AdmitQueued();             // REQUIRES mutex_
  ScheduleInput ScheduleInputNow() const;             // REQUIRES mutex_; without the config
  void Started(const std::string& id, const Result<AttemptHandle>& handle);  // REQUIRES mutex_
  // Kills the job's running attempt on a thread of its own (KillAttempt blocks).
  void KillInBackground(const JobRecord& job);  // REQUIRES mutex_
  // Kills the preempted attempts that outlived their grace and upload allowance.
  void EnforcePreemptionDeadlines();  // REQUIRES mutex_
  // The notice an AM's report reply carries while its attempt is being preempted.
  std::optional<protocol::PreemptNotice> PreemptNoticeFor(const JobRecord& job) const;  // REQUIRES mutex_

  // Stops the job's running attempt for another job (the policy's Preemption); the
  // attempt ends PREEMPTED and the job goes back to its queue.
  void StartPreempting(JobRecord& job, const std::string& reason);  // REQUIRES mutex_
  // Fills the spec's images (images_), or refuses a spec naming one when there is none.
  Status ResolveImages(JobSpec& spec) const;
  // Names the attempt's account (accounts_) and hands it to the backend; without the lock.
  Result<AttemptHandle> StartAttempt(AttemptLaunch& launch);
  // Refuses a job whose queue does not exist or could never hold it.
  Status CheckQueue(const JobSpec& spec);  // EXCLUDES mutex_
  // Writes every changed record to the history, outside mutex_, oldest change first.
  void Flush();
  // cluster_failure: the backend's words when the cluster itself ended the attempt.
  // `failed_hosts`: the hosts whose failure ended it (AttemptNote); their tasks say so.
  // `cluster_preempted`: the cluster preempted the attempt (AttemptNote::preempted).
  void EndAttempt(JobRecord& job, const ExitInfo& am_exit, const std::string& cluster_failure = "",
                  const std::vector<std::string>& failed_hosts = {}, bool cluster_preempted = false);  // REQUIRES mutex_
  void Changed(JobRecord& job);                              // REQUIRES mutex_
  // A change watchers see but the history need not keep (a queued job's new reason).
  void Shown(JobRecord& job);                                // REQUIRES mutex_
  JobRecord* FindLive(const std::string& id);                // REQUIRES mutex_
  Json KillLive(const std::string& id);  // a live job's summary after the kill; null when not live
  AttemptLaunch LaunchFor(const JobRecord& job) const;
  void Release(const std::string& id);                       // REQUIRES mutex_
  void RunInBackground(std::function<void()> work);  // REQUIRES mutex_

  JobStore& store_;
  SeriesStore& series_;
  ClusterBackend& backend_;
  const Clock& clock_;
  std::atomic<int64_t> passes_{0};
  std::atomic<bool> series_failing_{false};  // logged once when storing series starts and stops failing
  const std::string server_url_;
  const std::string home_;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, JobRecord> live_;            // GUARDED_BY(mutex_)
  std::deque<std::string> queue_;                    // GUARDED_BY(mutex_)
  std::map<std::string, AttemptHandle> handles_;     // GUARDED_BY(mutex_)
  std::set<std::string> starting_;                   // attempts being started; GUARDED_BY(mutex_)
  std::set<std::string> dirty_;                      // changed, not yet written; GUARDED_BY(mutex_)
  std::mutex flush_mutex_;                           // one Flush at a time: writes stay in order
  std::mutex step_mutex_;                            // one Step at a time
  std::map<std::string, JobAdmission> reserved_;     // GUARDED_BY(mutex_)
  QueueConfigFile queues_;                           // GUARDED_BY(mutex_)
  QueueCredit queue_credit_;                         // advanced at every pass; GUARDED_BY(mutex_)
  Resources free_;                                   // GUARDED_BY(mutex_)
  std::set<int> free_gpus_;                          // GUARDED_BY(mutex_)
  bool stopping_ = false;                            // GUARDED_BY(mutex_)
  bool wake_ = false;                                // a change the scheduler must act on; GUARDED_BY(mutex_)
  bool history_failing_ = false;                     // the last Flush could not write; GUARDED_BY(mutex_)
  void Wake();                                       // EXCLUDES mutex_
  std::thread scheduler_;
  int background_running_ = 0;                       // GUARDED_BY(mutex_)
  Histogram heartbeat_rtt_;                          // thread-safe itself
  std::function<std::string(const std::string&, int)> attempt_tokens_;
  std::function<Result<std::string>(const JobSpec&)> accounts_;
  std::function<Status(JobSpec&)> images_;
  std::string jobs_dir_;
  std::function<void()> change_listener_;
};

}  // namespace shoal
