// ClusterBackend: where job attempts run. The server asks a backend for its capacity and
// to start, watch and kill one application master per job attempt; the AM, in turn,
// asks the backend's ContainerLauncher to start one container per task.
//
// Contract:
//  - StartAttempt returns once the AM has been handed to the backend (a process started
//    for local, a batch job submitted for Slurm); the AM then talks to the server itself.
//  - PollAttempt is non-blocking; it returns the AM's end once it has ended.
//  - KillAttempt ends the AM and everything the attempt started, user processes
//    included; it is idempotent and returns once nothing of the attempt is left running.
//  - ContainerLauncher::Stop asks a container to stop its task (SIGTERM, then SIGKILL
//    after the grace period); Poll reports containers that have ended.
// Thread-safety: implementations are called from one thread of their owner (the
// server's scheduler, the AM's loop) unless they say otherwise.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/process.h"
#include "common/status.h"
#include "spec/fit.h"

namespace shoal {

struct AttemptLaunch {
  std::string job_id;
  int attempt = 1;
  std::string server_url;  // where the AM reports
  std::string attempt_dir; // logs and scratch space of this attempt
  JobSpec spec;            // what the attempt runs (a batch system asks for its roles' resources)
  std::string token;       // the attempt's own token (server/server_auth.h): the AM's only credential
  std::string server_info; // the server's <home>/server.json: where a restarted server now listens
  std::string run_as;      // the Unix account the attempt runs as (server/job_accounts.h); "": the server's own
};

// Whether the cluster holds each task to its resources, and how (docs/isolation.md).
struct TaskLimitsNote {
  bool enforced = false;
  std::string detail;  // how they are held, or why they are not and the fix
};

// One machine of the cluster, as GET /api/v1/cluster lists it.
struct ClusterNode {
  std::string name;
  std::string state;   // "up" (local); Slurm's: idle, mixed, allocated, down, drained+..., each lower case
  std::string reason;  // why a node is down or drained, as the cluster says it ("" when none)
  Resources capacity;
  std::optional<Resources> allocated;  // what jobs hold there; none: the server's own admission is the answer
};

struct AttemptHandle {
  std::string backend_id;  // a pid for local, a Slurm job id for slurm
};

// What the cluster itself says about an attempt, beyond its AM's reports.
struct AttemptNote {
  std::string message;           // why it waits ("waiting for Slurm: ..."), or why it ended
  bool ended_by_cluster = false; // the cluster ended it (a node failed, preemption, a time limit)
  // Addresses of the nodes whose failure ended it, as tasks name their hosts: a task that
  // ran there says its node failed.
  std::vector<std::string> failed_hosts;
  // The cluster preempted it for another job (Slurm's preemption): the server treats the
  // attempt as it treats its own preemptions (PREEMPTED, back in the queue, not counted).
  bool preempted = false;
};

class ClusterBackend {
 public:
  virtual ~ClusterBackend() = default;
  virtual std::string name() const = 0;
  virtual ClusterCapacity Capacity() const = 0;
  virtual Result<AttemptHandle> StartAttempt(const AttemptLaunch& launch) = 0;
  virtual std::optional<ExitInfo> PollAttempt(const AttemptHandle& handle) = 0;
  virtual void KillAttempt(const AttemptLaunch& launch, const AttemptHandle& handle) = 0;
  // Ends whatever of an attempt outlived its AM; called after every attempt.
  virtual void CleanUpAttempt(const AttemptLaunch& launch) = 0;
  // Whether an attempt left running by a previous server process is still alive.
  virtual bool AttemptAlive(const AttemptHandle& handle) const = 0;
  // The cluster's words on an attempt: while it waits, and once PollAttempt reported its
  // end. Backends whose attempts start at once and end only with their AM say nothing.
  virtual AttemptNote Note(const AttemptHandle&) { return {}; }
  // Whether this cluster can run such a job at all (beyond capacity); an error is the
  // user's to fix (InvalidArgument) and refuses the job at submit.
  virtual Status Accepts(const JobSpec&) const { return Status::Ok(); }
  virtual TaskLimitsNote TaskLimits() const = 0;
  // Every node, with its state; may ask the cluster (a Slurm backend reads sinfo at most
  // every few seconds). Safe from any thread.
  virtual std::vector<ClusterNode> Nodes() = 0;
  // Called (from any thread) when an attempt may have ended, so the owner polls at once
  // instead of at its next tick. Set once, before the first StartAttempt.
  virtual void SetChangeCallback(std::function<void()>) {}
};

struct ContainerLaunch {
  std::string job_id;
  int attempt = 1;
  std::string role;
  int index = 0;
  std::vector<std::string> argv;           // the container agent's command line
  std::map<std::string, std::string> env;  // the container agent's environment
  std::string workdir;
  std::string agent_log;                   // where the agent's own diagnostics go
  Resources resources;                     // the task's CPUs, memory and GPUs
};

class ContainerLauncher {
 public:
  virtual ~ContainerLauncher() = default;
  virtual Result<std::string> Launch(const ContainerLaunch& launch) = 0;  // returns a container id
  // The containers of an attempt's start, each one's id or error in the same order. By
  // default each is launched alone; a launcher may start several as one (on Slurm, one
  // step for a role's tasks), and each still has an id of its own.
  virtual std::vector<Result<std::string>> LaunchAll(const std::vector<ContainerLaunch>& launches) {
    std::vector<Result<std::string>> ids;
    for (const ContainerLaunch& launch : launches) ids.push_back(Launch(launch));
    return ids;
  }
  virtual void Stop(const std::string& container_id, int grace_ms) = 0;
  virtual void Kill(const std::string& container_id) = 0;
  // Containers that ended since the last call, with how they ended.
  virtual std::vector<std::pair<std::string, ExitInfo>> Poll() = 0;
  // Hostname tasks of this launcher run on, as other tasks reach them.
  virtual std::string Host() const = 0;
  // Called (from any thread) when a container may have ended; set once, before Launch.
  virtual void SetChangeCallback(std::function<void()>) {}
};

}  // namespace shoal
