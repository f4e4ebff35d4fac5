#include "container/container_command.h"

#include <CLI/CLI.hpp>
#include <thread>

#include "backend/slurm/slurm_preemption.h"
#include "common/log.h"
#include "common/termination.h"
#include "container/container_agent.h"
#include "protocol/task_messages.h"

namespace shoal {

Result<ContainerOptions> ParseContainerArgs(int argc, char** argv, const std::map<std::string, std::string>& env) {
  CLI::App app{"The container agent of one task. The application master starts it; users do not."};
  ContainerOptions options;
  app.add_option("--am", options.am_addr, "the AM's host:port")->required();
  app.add_option("--job", options.job_id, "the job id")->required();
  app.add_option("--attempt", options.attempt, "the attempt number")->required();
  app.add_option("--role", options.role, "the task's role")->required();
  app.add_option("--index", options.index, "the task's index in its role")->required();
  app.add_option("--log", options.log_path, "the task's log file")->required();
  app.add_option("--task-dir", options.task_dir, "the task's own directory (SHOAL_TASK_DIR)")->required();
  app.add_option("--host", options.host, "the address other tasks reach this one on");
  app.add_flag("--gpus-from-env", options.gpus_from_env,
               "report the GPUs in CUDA_VISIBLE_DEVICES (the cluster's own assignment, e.g. Slurm's) as the task's");
  app.add_option("--ports", options.ports, "how many ports to reserve (the second is the board's)")->check(CLI::Range(1, 16));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (app.exit(e) == 0) return Aborted("");  // --help
    return InvalidArgument(e.what());
  }
  if (auto token = env.find(protocol::kTaskTokenVariable); token != env.end()) options.task_token = token->second;
  if (auto marker = env.find("SHOAL_ATTEMPT_DIR"); marker != env.end()) options.attempt_dir_marker = marker->second;
  if (auto slurm_job = env.find("SLURM_JOB_ID"); slurm_job != env.end()) {
    // A step of a Slurm job: a SIGTERM from outside Shoal may be Slurm's preemption.
    options.preemption_probe = [id = slurm_job->second] { return SlurmPreemptionReason(RealSlurmCommands::Instance(), id); };
  }
  return options;
}

int ContainerCommand(int argc, char** argv) {
  auto parsed = ParseContainerArgs(argc, argv, CurrentEnvironment());
  if (!parsed.ok()) return parsed.status().code() == StatusCode::kAborted ? 0 : 2;
  ContainerOptions options = std::move(parsed).value();
  SetLogComponent("container " + options.role + "[" + std::to_string(options.index) + "]");
  BlockTerminationSignals();
  ContainerAgent agent(options, RealProcessLauncher::Instance(), SystemClock::Instance());
  OnTermination([&agent] { agent.RequestStop(); });
  std::_Exit(agent.Run());
}

}  // namespace shoal
