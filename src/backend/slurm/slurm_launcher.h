// SlurmContainerLauncher: the AM's launcher inside a Slurm batch job. Each task's
// container agent runs as one srun step on the node Slurm gave that task, with the
// task's CPUs, memory and GPUs; the agent is told its node's address (--host) and
// reports the GPUs Slurm assigned it (--gpus-from-env), so the cluster description names
// real node addresses and the task's own CUDA_VISIBLE_DEVICES.
//
// Contract:
//  - FromEnvironment reads the allocation from the batch job's variables
//    (SLURM_JOB_NODELIST[_HET_GROUP_g], SLURM_TASKS_PER_NODE[_HET_GROUP_g], SLURMD_NODENAME,
//    SHOAL_SLURM_ROLES) and the nodes' addresses from sinfo; an error says what is missing.
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
  void Stop(const std::string& container_id, int grace_ms) override;
  void Kill(const std::string& container_id) override { steps_.Kill(container_id); }
  std::vector<std::pair<std::string, ExitInfo>> Poll() override;
  void SetChangeCallback(std::function<void()> changed) override { steps_.SetChangeCallback(std::move(changed)); }
  std::string Host() const override { return host_; }

 private:
  SlurmContainerLauncher(std::map<std::string, std::vector<StepPlacement>> plan,
                         std::map<std::string, std::string> addresses, std::string host, std::string slurm_job_id,
                         SlurmCommands& commands, ProcessLauncher& processes, const Clock& clock)
      : plan_(std::move(plan)), addresses_(std::move(addresses)), host_(std::move(host)),
        slurm_job_id_(std::move(slurm_job_id)), commands_(commands), clock_(clock), steps_(processes) {}
  // The step's id ("812.3") by its name in squeue, or "" when Slurm does not list it.
  std::string FindStep(const std::string& step_name);
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
};

}  // namespace shoal
