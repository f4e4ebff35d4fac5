// SlurmContainerLauncher: the AM's launcher inside a Slurm batch job. The agents of a
// role's tasks run as one srun step over the role's allocation (role_step.h), as a plain
// `srun --ntasks=N` would; a role whose tasks have GPUs, or a single task, gets one step
// per task on the node Slurm gave it, with the task's CPUs, memory and GPUs (so Slurm
// sets each task's own CUDA_VISIBLE_DEVICES). Each agent learns its node's address and
// reports the GPUs Slurm assigned it (--gpus-from-env), so the cluster description names
// real node addresses.
//
// Contract:
//  - FromEnvironment reads the allocation from the batch job's variables
//    (SLURM_JOB_NODELIST[_HET_GROUP_g], SLURM_TASKS_PER_NODE[_HET_GROUP_g], SLURMD_NODENAME,
//    SHOAL_SLURM_ROLES) and the nodes' addresses from kSlurmNodeAddressesVariable, which
//    the server writes into the batch script (sinfo when it is missing); an error says
//    what is missing.
//  - LaunchAll gives each task of a shared step an id of its own ("<srun's id>/<index>").
//    Poll reports a task of a shared step ended as soon as srun says how it ended (a
//    nonzero exit or a signal, on srun's stderr), and every task of the step that is left
//    when srun ends. Stop of such a task is left to its agent, which the AM's heartbeat
//    answer tells to stop (SIGTERM, the grace, SIGKILL); srun is stopped, ending the
//    whole step, only if one of them is still there kAgentHearsWithinMs plus the grace
//    later (the AM stops tasks only once its attempt has ended).
//  - srun runs as a child of the AM. Stop signals the step's own process, the task's
//    agent, with SIGTERM (`scancel --signal=TERM JOB.STEP`, the step found by its name in
//    `squeue --steps`): the agent passes it to the program and gives it the agent's grace,
//    as on the local cluster. A step squeue does not list (it lags srun by a moment) or
//    scancel cannot signal is left to its agent, which the AM's heartbeat answer tells to
//    stop. Only when the step is still there after `grace_ms` (plus kAgentHearsWithinMs
//    when left to the agent) is srun itself stopped (SIGTERM, which cancels the step and
//    kills what is left, then SIGKILL). Poll reports ended steps. Ending the batch job
//    ends every step that is left.
//  - Host() is the address of the node the AM runs on.
// Thread-safety: as ContainerLauncher (the AM's loop).
#pragma once

#include <functional>
#include <memory>
#include <set>

#include "backend/local/local_backend.h"
#include "backend/slurm/slurm_commands.h"
#include "backend/slurm/slurm_job.h"
#include "common/clock.h"

namespace shoal {

using NodeListExpander = std::function<Result<std::vector<std::string>>(const std::string& node_list)>;

// Role -> where each of its tasks runs, from the batch job's environment.
Result<std::map<std::string, std::vector<StepPlacement>>> PlanSteps(const std::map<std::string, std::string>& env,
                                                                   const NodeListExpander& expand);

class SlurmContainerLauncher final : public ContainerLauncher {
 public:
  static Result<std::unique_ptr<SlurmContainerLauncher>> FromEnvironment(const std::map<std::string, std::string>& env,
                                                                         SlurmCommands& commands,
                                                                         ProcessLauncher& processes,
                                                                         const Clock& clock = SystemClock::Instance());

  Result<std::string> Launch(const ContainerLaunch& launch) override;
  std::vector<Result<std::string>> LaunchAll(const std::vector<ContainerLaunch>& launches) override;
  void Stop(const std::string& container_id, int grace_ms) override;
  void Kill(const std::string& container_id) override;
  std::vector<std::pair<std::string, ExitInfo>> Poll() override;
  void SetChangeCallback(std::function<void()> changed) override { steps_.SetChangeCallback(std::move(changed)); }
  std::string Host() const override { return host_; }

 private:
  SlurmContainerLauncher(std::map<std::string, std::vector<StepPlacement>> plan,
                         std::map<std::string, std::string> addresses, std::string host, std::string slurm_job_id,
                         SlurmCommands& commands, ProcessLauncher& processes, const Clock& clock)
      : plan_(std::move(plan)), addresses_(std::move(addresses)), host_(std::move(host)),
        slurm_job_id_(std::move(slurm_job_id)), commands_(commands), clock_(clock), steps_(processes) {}
  // The role's tasks (launches in index order) as one step; an error when they cannot share one.
  Result<std::vector<std::string>> LaunchRoleStep(const std::vector<ContainerLaunch>& launches);
  // The step's id ("812.3") by its name in squeue, or "" when Slurm does not list it.
  std::string FindStep(const std::string& step_name);
  // Tasks of shared steps that srun says have ended since the last call.
  std::vector<std::pair<std::string, ExitInfo>> ReadTaskEnds();
  // How long an agent takes to learn from a heartbeat's answer that its task is to stop
  // (heartbeats come every second).
  static constexpr int64_t kAgentHearsWithinMs = 3'000;

  std::map<std::string, std::vector<StepPlacement>> plan_;
  std::map<std::string, std::string> addresses_;  // node name -> address
  std::string host_;
  std::string slurm_job_id_;
  SlurmCommands& commands_;
  const Clock& clock_;
  LocalContainerLauncher steps_;  // the srun processes, children of the AM
  std::map<std::string, std::string> steps_by_id_;  // container id -> its step's name (srun --job-name)
  std::map<std::string, int64_t> end_steps_at_ms_;  // signalled through their agents: when srun is stopped too
  struct SharedStep {
    std::string srun_log;           // srun's own stderr, where it says how tasks ended
    size_t log_read = 0;            // bytes of it already read
    std::vector<std::string> tasks;  // the tasks' ids, by index
    std::set<std::string> ended;     // reported by Poll
  };
  std::map<std::string, SharedStep> shared_;           // srun's id -> its step
  std::map<std::string, std::string> shared_task_srun_;  // a shared step's task id -> srun's id
};

}  // namespace shoal
