#include "container/container_command.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

#include "backend/slurm/role_step.h"
#include "backend/slurm/slurm_preemption.h"
#include "common/log.h"
#include "common/termination.h"
#include "container/container_agent.h"
#include "protocol/task_messages.h"

namespace shoal {

namespace {

std::string Get(const std::map<std::string, std::string>& env, const std::string& key) {
  auto it = env.find(key);
  return it == env.end() ? "" : it->second;
}

// A command line shared by the tasks of one Slurm step (backend/slurm/role_step.h): the
// index from `--index-from-env VAR`, put in place of every placeholder.
Result<std::vector<std::string>> FillIndex(std::vector<std::string> args, const std::map<std::string, std::string>& env,
                                           std::string& index) {
  auto flag = std::find(args.begin(), args.end(), "--index-from-env");
  if (flag == args.end()) return args;
  if (flag + 1 == args.end()) return InvalidArgument("--index-from-env needs a variable's name");
  index = Get(env, *(flag + 1));
  if (index.empty() || index.size() > 6 || index.find_first_not_of("0123456789") != std::string::npos) {
    return InvalidArgument("--index-from-env " + *(flag + 1) + ": the variable holds no task index ('" + index.substr(0, 20) + "')");
  }
  args.erase(flag, flag + 2);
  for (std::string& arg : args) {
    for (size_t at = arg.find(kIndexPlaceholder); at != std::string::npos; at = arg.find(kIndexPlaceholder, at + index.size())) {
      arg.replace(at, std::strlen(kIndexPlaceholder), index);
    }
  }
  return args;
}

// Overwrites a variable's value where the process's environment block holds it
// (/proc/PID/environ reads that memory), then removes it.
void WipeVariable(const char* name) {
  if (char* value = std::getenv(name)) std::memset(value, 0, std::strlen(value));
  unsetenv(name);
}

}  // namespace

Result<ContainerOptions> ParseContainerArgs(int argc, char** argv, const std::map<std::string, std::string>& env) {
  CLI::App app{"The container agent of one task. The application master starts it; users do not."};
  ContainerOptions options;
  std::string node_addresses;
  app.add_option("--am", options.am_addr, "the AM's host:port")->required();
  app.add_option("--job", options.job_id, "the job id")->required();
  app.add_option("--attempt", options.attempt, "the attempt number")->required();
  app.add_option("--role", options.role, "the task's role")->required();
  app.add_option("--index", options.index, "the task's index in its role")->required();
  app.add_option("--log", options.log_path, "the task's log file")->required();
  app.add_option("--task-dir", options.task_dir, "the task's own directory (SHOAL_TASK_DIR)")->required();
  app.add_option("--host", options.host, "the address other tasks reach this one on");
  app.add_option("--node-addresses", node_addresses,
                 "node=address,...: the address is this node's (SLURMD_NODENAME), for agents sharing one Slurm step");
  app.add_flag("--gpus-from-env", options.gpus_from_env,
               "report the GPUs in CUDA_VISIBLE_DEVICES (the cluster's own assignment, e.g. Slurm's) as the task's");
  app.add_option("--ports", options.ports, "how many ports to reserve (the second is the board's)")->check(CLI::Range(1, 16));
  app.add_option("--register-timeout-ms", options.register_timeout_ms,
                 "how long to keep trying to register and to wait for the cluster (the job's timeouts.register)")
      ->check(CLI::PositiveNumber);
  // Also read: --index-from-env VAR, which fills every %t of the others with VAR's value.
  std::string index;
  ASSIGN_OR_RETURN(std::vector<std::string> args,
                   FillIndex(std::vector<std::string>(argv + std::min(argc, 1), argv + argc), env, index));
  std::reverse(args.begin(), args.end());  // CLI11 takes a vector last argument first
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    if (app.exit(e) == 0) return Aborted("");  // --help
    return InvalidArgument(e.what());
  }
  if (!node_addresses.empty()) {
    std::string node = Get(env, "SLURMD_NODENAME");
    auto addresses = ParseNodeAddresses(node_addresses);
    options.host = addresses.count(node) ? addresses[node] : node;
    if (options.host.empty()) return InvalidArgument("--node-addresses: SLURMD_NODENAME is not set");
  }
  options.task_token = Get(env, protocol::kTaskTokenVariable);
  if (std::string tokens = Get(env, kTaskTokensVariable); !index.empty() && !tokens.empty()) {
    std::vector<std::string> list;
    std::stringstream items(tokens);
    for (std::string token; std::getline(items, token, ',');) list.push_back(token);
    size_t own = std::stoul(index);
    if (own >= list.size()) return InvalidArgument(std::string(kTaskTokensVariable) + " has no token for task " + index);
    options.task_token = list[own];
  }
  options.attempt_dir_marker = Get(env, "SHOAL_ATTEMPT_DIR");
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
  // The tokens leave this process's memory, which its programs could read through /proc.
  for (const char* name : {protocol::kTaskTokenVariable, kTaskTokensVariable}) WipeVariable(name);
  SetLogComponent("container " + options.role + "[" + std::to_string(options.index) + "]");
  BlockTerminationSignals();
  ContainerAgent agent(options, RealProcessLauncher::Instance(), SystemClock::Instance());
  OnTermination([&agent] { agent.RequestStop(); });
  std::_Exit(agent.Run());
}

}  // namespace shoal
