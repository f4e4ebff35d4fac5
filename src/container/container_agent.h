// ContainerAgent: `shoal container`, one per task. It reserves the task's ports,
// registers with the AM, waits for the task's launch plan (protocol/task_messages.h),
// starts the user program with the environment contract (docs/environment.md): the
// inherited allowlist, the plan, then its own task directory, inputs and outputs (and
// nothing else: no token of Shoal's reaches the program), captures its output into the task
// log, reports progress, resource samples and metric lines in heartbeats, and reports how
// the program ended.
//
// Contract:
//  - The user program (nproc_per_node copies of it, each with its own local-rank
//    variables; the first that fails stops the others and decides the task's exit) runs
//    in a process group of its own and dies with the agent
//    (PR_SET_PDEATHSIG). Stopping (an AM order, SIGTERM to the agent) sends the group
//    SIGTERM, then SIGKILL after the grace period, which the whole group gets even when
//    the shell at its head died at once (the program under it may be printing its
//    traceback); when the program exits on its own, whatever it left in its group is
//    killed at once.
//  - Preemption (a heartbeat reply's PreemptNotice, or a SIGTERM from outside that the
//    cluster says was its preemption: preemption_probe): the agent writes the preemption
//    file ($SHOAL_PREEMPTION_FILE: SHOAL_PREEMPTED=1, the reason and the deadline, as
//    shell assignments), sends the programs SIGTERM, and kills them when the notice's
//    grace is over; their outputs are not committed (but on_failure ones).
//  - Checkpoints (data/checkpoints.h): restored before the program starts; a marked
//    checkpoint is taken while it runs and once more after it ended; each round's upload
//    is noted in the task log.
//  - Image (the plan's `image`): each local process runs in a container of its own, started
//    with runc on a bundle in <task dir>/.shoal-oci (isolation/oci_bundle.h), with HOME the
//    task directory; signals reach the program through runc, which passes them on.
//  - Run() returns the agent's exit code: 0 when it reported the program's end (whatever
//    that was), 1 when it could not reach the AM.
// Thread-safety: Run() on one thread; RequestStop() from any thread.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/clock.h"
#include "common/http_client.h"
#include "common/process.h"
#include "container/agent_guard.h"
#include "container/output_capture.h"
#include "container/resource_sampler.h"
#include "data/checkpoints.h"
#include "data/task_data.h"
#include "isolation/cgroup_group.h"
#include "isolation/oci_bundle.h"
#include "protocol/task_messages.h"

namespace shoal {

struct ContainerOptions {
  std::string am_addr;
  std::string job_id;
  int attempt = 1;
  std::string role;
  int index = 0;
  std::string log_path;
  std::string task_dir;  // created before the program starts; SHOAL_TASK_DIR
  std::string host = "127.0.0.1";
  int ports = 1;
  bool gpus_from_env = false;  // the cluster set CUDA_VISIBLE_DEVICES: report those GPUs as the task's
  int64_t register_timeout_ms = 120'000;  // the job's timeouts.register: how long to register and wait for the cluster
  std::string task_token;  // proves to the AM which task this is (container_command reads kTaskTokenVariable)
  std::string attempt_dir_marker;  // SHOAL_ATTEMPT_DIR, passed on to the program for the backend's sweep
  int stop_grace_ms = 3000;
  // The longest the supervising loop waits for an event before it looks at the clock
  // again. It wakes for the program's output, a program's exit (a pidfd), a stop request
  // and its own next deadline (a heartbeat, the stop grace), so an idle task costs a
  // wake-up per heartbeat; the mini cluster shortens it, since its clock moves when the
  // test says and not while the loop waits.
  int max_wait_ms = 1000;
  // When SIGTERM reaches the agent from outside Shoal: the cluster's reason when that was
  // a preemption ("" otherwise). Set on Slurm (backend/slurm/slurm_preemption.h).
  std::function<std::string()> preemption_probe;
};

class ContainerAgent {
 public:
  ContainerAgent(ContainerOptions options, ProcessLauncher& processes, const Clock& clock);
  ~ContainerAgent();
  ContainerAgent(const ContainerAgent&) = delete;
  ContainerAgent& operator=(const ContainerAgent&) = delete;
  int Run();
  // SIGTERM to the agent (the AM's launcher stopping the task, or something outside
  // Shoal): the program is stopped, and the exit report says the agent was terminated.
  void RequestStop() {
    terminated_ = true;
    stop_requested_ = true;
    WakeSupervisor();
  }

 private:
  protocol::TaskId Task() const;
  // Long-polls an AM endpoint (cluster, mpi command) until its Reply says ready.
  template <typename Reply>
  Result<Reply> WaitFor(const char* endpoint);
  static constexpr size_t kMaxPendingMetrics = 5000;
  // How often a running program's checkpoint marker is looked for.
  static constexpr int64_t kCheckpointPollMs = 200;
  struct Programs {
    std::vector<pid_t> pids;             // one per local rank
    std::vector<OutputStream> streams;   // their stdout and stderr
    std::vector<std::string> secrets;    // values masked in the log (the spec's secrets)
    pid_t board = 0;                     // the board beside them, if any: ended by Run, not an orphan
    AgentGuard guard;                    // ends them all if this agent is killed (agent_guard.h)
    std::vector<RuncPaths> containers;   // in an image: each process's container (isolation/oci_bundle.h)
  };
  // The argv that runs one local process: /bin/sh -c, in the plan's image when it has one
  // (the bundle is written here, and the container added to `programs`).
  Result<std::vector<std::string>> ProgramArgv(const std::string& command, const std::string& workdir,
                                               const std::map<std::string, std::string>& env, size_t local,
                                               Programs& programs);
  // Removes the stopped containers (after their cgroups told whether the kernel killed one).
  void RemoveContainers(const Programs& programs);
  // An MPI task's Open MPI session base: where the plan names kMpiSessionBasePattern
  // (common/paths.h), makes the folder with mkdtemp, as this task's account (mode 0700),
  // and puts its path in `env`. A name known in advance could be made first in the shared
  // /tmp by another account, which would then own the folder Open MPI works in.
  Status MakeMpiSessionBase(std::map<std::string, std::string>& env);
  Result<Programs> StartPrograms(const std::string& command, const std::string& workdir,
                                 const std::map<std::string, std::string>& env,
                                 const std::vector<protocol::EnvMap>& process_envs);
  // Starts the board on `port`; adds its URL to `started`. Returns its pid, or 0.
  pid_t StartBoard(const std::string& command, const std::string& workdir, std::map<std::string, std::string> env,
                   int port, protocol::StartedRequest& started);
  int Supervise(Programs& programs, int log_fd, int heartbeat_ms, ResourceSampler& sampler);
  // Waits for the supervising loop's next event, at most until `deadline` (or max_wait_ms):
  // output (copied by `capture`), the exit of a program whose pidfd is in `exit_fds`
  // (-1: none), or WakeSupervisor. Without a pidfd for every running program, it looks
  // again every kPollWithoutPidfdsMs.
  void WaitForEvent(OutputCapture& capture, const std::vector<int>& exit_fds, int64_t deadline);
  void WakeSupervisor();
  // Kernels without pidfds (before Linux 5.3): how often a program's exit is looked for.
  static constexpr int kPollWithoutPidfdsMs = 50;
  // `shoal stack`: appends the program's stacks to the task log and sends them to the AM.
  void AnswerStackRequest(int64_t id, const std::vector<pid_t>& pids, int log_fd);
  void ReportExit(const ExitInfo& exit, const std::string& message);

  ContainerOptions options_;
  ProcessLauncher& processes_;
  const Clock& clock_;
  HttpJsonClient am_;
  HttpJsonClient heartbeats_;  // am_ over one kept-alive connection: a heartbeat a second would open one each
  std::atomic<bool> stop_requested_{false};  // the AM or a signal asked the task to stop
  bool stopping_ = false;                    // one of several processes failed
  std::atomic<bool> terminated_{false};      // RequestStop: SIGTERM reached the agent
  int wake_fd_ = -1;                         // an eventfd: RequestStop wakes the supervising loop
  std::unique_ptr<data::TaskData> data_;     // inputs, outputs, saved models (docs/data.md)
  // Runs work (an upload) on a thread of its own while heartbeating, so the AM does not
  // take the task for lost or hung.
  Status WhileHeartbeating(int heartbeat_ms, const std::function<Status()>& work);
  // The checkpoints' notes, appended to the task log.
  void WriteCheckpointNotes(int log_fd);
  void WritePreemptionFile(const protocol::PreemptNotice& notice);
  std::unique_ptr<data::TaskCheckpoints> checkpoints_;
  std::optional<protocol::PreemptNotice> preempt_;  // the AM's notice, once one came
  std::string preemption_file_;
  std::string mpi_session_base_;  // MakeMpiSessionBase's folder, removed at the task's end
  int64_t preemption_grace_ms_ = 30'000;  // the job's, from the plan
  std::optional<ImageSpec> image_;         // the plan's: the programs run in it
  // The task's own cgroup, when it runs confined in one with a memory limit (a local
  // task's, a Slurm step's with task/cgroup): what it samples, and how it tells an OOM kill.
  CgroupGroup confined_;
  int64_t oom_kills_before_ = 0;
};

}  // namespace shoal
