// SlurmBackend: job attempts run as Slurm batch jobs (docs/slurm.md). Each attempt is one
// batch job (heterogeneous, one component per role) whose script runs the application
// master; the AM starts the tasks as steps (SlurmContainerLauncher).
//
// Contract:
//  - Every Slurm call goes through SlurmCommands.
//  - Capacity is that of the usable nodes (sinfo), read by Connect() and kept.
//  - StartAttempt writes <attempt_dir>/batch.sh and submits it with sbatch; Slurm's
//    refusal (a job that can never run, a bad partition) is the attempt's error. Slurm
//    gives each component of a heterogeneous job nodes of its own, so a job with more
//    roles than the cluster has usable nodes is refused before sbatch.
//  - With a `run_as` account (a root server), the attempt's folders are the account's
//    and sbatch submits the job as it (--uid, --gid), so Slurm runs the AM, its steps and
//    the programs as that account, and its fair share and accounting see that user.
//  - A job's own `slurm:` options override the administrator's defaults unless locked
//    (slurm_job_options.h). Accepts() refuses a job that sets a locked field, and asks
//    Slurm about a job that sets any (`sbatch --test-only` with the attempt's options):
//    an unknown partition, account, QOS or reservation is refused at submit in Slurm's
//    own words.
//  - PollAttempt reads a cache. StartPolling() starts the thread that keeps it: squeue
//    (JSON) at most once per poll interval for every attempt it watches, falling back to
//    `scontrol show job` and sacct for a job squeue no longer lists. Without that thread
//    (unit tests), PollAttempt refreshes the cache itself. No Slurm command runs under the
//    backend's mutex. The attempt has ended once Slurm's job is final.
//  - Note says why a job waits (PENDING, Resources ...) and, for an attempt the cluster
//    ended (NODE_FAIL, PREEMPTED, TIMEOUT ...), why. NODE_FAIL names the job's nodes that
//    are down when the end is seen or, when none is (a node back in service at once),
//    those of its nodes that sinfo showed not responding while it ran (checked at most
//    once per node check interval).
//  - KillAttempt sends the AM SIGUSR2 (scancel --batch; SIGTERM would read as Slurm's own
//    ending of the job: preemption, an outside scancel), lets it stop its tasks for the
//    grace period, then scancels the whole job and waits until no step is left.
//  - A job CANCELLED by a scancel that was not Shoal's own (KillAttempt, CleanUpAttempt)
//    was ended by the cluster, like NODE_FAIL: the attempt fails with that reason and may
//    be retried (docs/slurm.md).
// Thread-safety: all methods may be called from any thread; the cache takes a mutex.
#pragma once

#include <map>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "backend/cluster_backend.h"
#include "backend/slurm/slurm_job_options.h"
#include "backend/slurm/slurm_commands.h"
#include "backend/slurm/slurm_state.h"
#include "common/clock.h"

namespace shoal {

struct SlurmOptions {
  std::string server_id;                    // names the jobs: shoal-<server id>-job-N-A (ServerId)
  std::string partition;                    // empty: the cluster's default partition
  std::vector<std::string> sbatch_options;  // more #SBATCH options from the administrator
  std::set<std::string> locked;             // slurm: fields jobs may not set (slurm_job_options.h)
  int kill_grace_ms = 5000;
  int poll_interval_ms = 1000;
  int node_check_interval_ms = 5000;  // how often a running job's nodes are checked for failure
};

class SlurmBackend final : public ClusterBackend {
 public:
  SlurmBackend(SlurmCommands& commands, std::string shoal_executable, SlurmOptions options, const Clock& clock);
  ~SlurmBackend() override;
  // Starts the thread that polls Slurm for the watched attempts (the server calls it).
  void StartPolling();

  // Reads the cluster's capacity; an error says why Slurm cannot be used.
  Status Connect();

  std::string name() const override { return "slurm"; }
  ClusterCapacity Capacity() const override { return capacity_; }
  Result<AttemptHandle> StartAttempt(const AttemptLaunch& launch) override;
  std::optional<ExitInfo> PollAttempt(const AttemptHandle& handle) override;
  void KillAttempt(const AttemptLaunch& launch, const AttemptHandle& handle) override;
  void CleanUpAttempt(const AttemptLaunch& launch) override;
  bool AttemptAlive(const AttemptHandle& handle) const override;
  AttemptNote Note(const AttemptHandle& handle) override;
  // Refuses MPI jobs (not supported on Slurm yet) and jobs with more roles than usable nodes.
  Status Accepts(const JobSpec& spec) const override;
  std::vector<ClusterNode> Nodes() override;  // sinfo's, at most kNodesMaxAgeMs old
  TaskLimitsNote TaskLimits() const override {
    return {true, "held by Slurm: its task/cgroup plugin, where the cluster configures it (docs/slurm.md)"};
  }

 private:
  SlurmDefaults Defaults() const;
  // Locks, then `sbatch --test-only` with the attempt's options.
  Status CheckJobOptions(const JobSpec& spec) const;
  struct Watched {
    std::optional<SlurmJobState> state;
    std::vector<std::string> failed_nodes;  // named in ended_note
    int64_t polled_ms = -1;
    std::string ended_note;  // filled once, when the job is final
    int64_t nodes_checked_ms = -1;
    std::vector<std::string> unresponsive;  // its nodes seen down or not responding while it ran
    bool cancelled_by_shoal = false;  // KillAttempt or CleanUpAttempt scancelled it
  };
  // The cluster, not Shoal or the AM, ended it: a node failed, a time limit, preemption,
  // or a scancel from outside Shoal. Reads only `w`; call with mutex_ held.
  static bool EndedByCluster(const Watched& w);
  // Marks the job as scancelled by Shoal itself (a kill, a clean-up). EXCLUDES mutex_
  void MarkCancelledByShoal(const std::string& id);
  // Asks Slurm about every watched job, at most once per poll interval. EXCLUDES mutex_
  void Refresh(bool force);
  // squeue, then scontrol, then sacct: the states of these jobs Slurm still knows.
  std::map<std::string, SlurmJobState> Query(const std::vector<std::string>& ids) const;
  // The nodes of a Slurm node list that are down, failing, drained or not responding.
  std::vector<std::string> DownNodes(const std::string& nodes) const;
  std::string SlurmIdOf(const AttemptLaunch& launch);

  SlurmCommands& commands_;
  std::string executable_;
  SlurmOptions options_;
  const Clock& clock_;
  Result<std::vector<SlurmNode>> ReadNodes();  // sinfo --json, the partition's nodes, each once
  static constexpr int64_t kNodesMaxAgeMs = 2000;
  std::mutex nodes_mutex_;
  std::vector<ClusterNode> nodes_;  // GUARDED_BY(nodes_mutex_)
  int64_t nodes_read_ms_ = 0;       // GUARDED_BY(nodes_mutex_)
  ClusterCapacity capacity_;
  std::map<std::string, std::string> node_addresses_;  // name -> NodeAddr, read by Connect()
  int usable_nodes_ = 0;
  std::mutex mutex_;
  std::map<std::string, Watched> watched_;          // Slurm job id -> what is known; GUARDED_BY(mutex_)
  std::map<std::string, std::string> attempts_;     // "job-1/2" -> Slurm job id; GUARDED_BY(mutex_)
  bool polling_ = false;                            // GUARDED_BY(mutex_)
  std::condition_variable stop_polling_;
  std::thread poller_;
};

}  // namespace shoal
