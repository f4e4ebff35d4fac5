#include "backend/slurm/slurm_launcher.h"

#include <sstream>


namespace shoal {
namespace {

std::string Get(const std::map<std::string, std::string>& env, const std::string& key) {
  auto it = env.find(key);
  return it == env.end() ? "" : it->second;
}

}  // namespace

Result<std::map<std::string, std::vector<StepPlacement>>> PlanSteps(const std::map<std::string, std::string>& env,
                                                                   const NodeListExpander& expand) {
  std::vector<std::string> roles;
  std::stringstream names(Get(env, kSlurmRolesVariable));
  for (std::string role; std::getline(names, role, ',');) roles.push_back(role);
  if (roles.empty()) {
    return InvalidArgument(std::string(kSlurmRolesVariable) + " is not set: `shoal am --backend slurm` runs only in "
                           "the batch script Shoal's Slurm backend writes");
  }
  bool het = !Get(env, "SLURM_HET_SIZE").empty();
  if (!het && roles.size() > 1) return InvalidArgument("a job of several roles must be a heterogeneous Slurm job");
  std::map<std::string, std::vector<StepPlacement>> plan;
  for (size_t g = 0; g < roles.size(); ++g) {
    std::string suffix = het ? "_HET_GROUP_" + std::to_string(g) : "";
    std::string node_list = Get(env, "SLURM_JOB_NODELIST" + suffix);
    std::string per_node = Get(env, "SLURM_TASKS_PER_NODE" + suffix);
    if (node_list.empty() || per_node.empty()) {
      return InvalidArgument("the batch job's environment lacks SLURM_JOB_NODELIST" + suffix + " or SLURM_TASKS_PER_NODE" +
                             suffix);
    }
    ASSIGN_OR_RETURN(std::vector<std::string> nodes, expand(node_list));
    ASSIGN_OR_RETURN(std::vector<int> counts, ParseTasksPerNode(per_node));
    int tasks = 0;
    for (int c : counts) tasks += c;
    ASSIGN_OR_RETURN(std::vector<std::string> placed, PlaceTasks(nodes, counts, tasks));
    for (const std::string& node : placed) {
      plan[roles[g]].push_back(StepPlacement{het ? std::optional<int>(static_cast<int>(g)) : std::nullopt, node});
    }
  }
  return plan;
}

Result<std::unique_ptr<SlurmContainerLauncher>> SlurmContainerLauncher::FromEnvironment(
    const std::map<std::string, std::string>& env, SlurmCommands& commands, ProcessLauncher& processes,
    const Clock& clock) {
  auto expand = [&commands](const std::string& list) -> Result<std::vector<std::string>> {
    ASSIGN_OR_RETURN(CommandOutput out, commands.Run({"scontrol", "show", "hostnames", list}));
    if (!out.ok()) return Unavailable("scontrol show hostnames " + list + ": " + out.Said());
    std::vector<std::string> nodes;
    std::stringstream lines(out.out);
    for (std::string node; lines >> node;) nodes.push_back(node);
    return nodes;
  };
  ASSIGN_OR_RETURN(auto plan, PlanSteps(env, expand));
  ASSIGN_OR_RETURN(CommandOutput out, commands.Run({"sinfo", "-h", "-N", "-o", "%N %o"}));
  if (!out.ok()) return Unavailable("sinfo cannot list the nodes' addresses: " + out.Said());
  std::map<std::string, std::string> addresses;
  std::stringstream lines(out.out);
  for (std::string node, address; lines >> node >> address;) addresses[node] = address;
  std::string self = Get(env, "SLURMD_NODENAME");
  std::string host = addresses.count(self) ? addresses[self] : self;
  if (host.empty()) return InvalidArgument("SLURMD_NODENAME is not set: the AM must run in a Slurm batch job");
  return std::unique_ptr<SlurmContainerLauncher>(new SlurmContainerLauncher(
      std::move(plan), std::move(addresses), host, Get(env, "SLURM_JOB_ID"), commands, processes, clock));
}

Result<std::string> SlurmContainerLauncher::Launch(const ContainerLaunch& launch) {
  auto it = plan_.find(launch.role);
  if (it == plan_.end() || launch.index < 0 || launch.index >= static_cast<int>(it->second.size())) {
    return Internal("Slurm's allocation has no place for task " + launch.role + "[" + std::to_string(launch.index) + "]");
  }
  const StepPlacement& where = it->second[launch.index];
  std::vector<std::string> agent = launch.argv;
  auto address = addresses_.find(where.node);
  agent.insert(agent.end(), {"--host", address != addresses_.end() ? address->second : where.node, "--gpus-from-env"});
  ContainerLaunch step = launch;
  std::string step_name = "shoal-" + launch.role + "-" + std::to_string(launch.index);
  step.argv = StepArgv(where, step_name, launch.resources, agent);
  ASSIGN_OR_RETURN(std::string id, steps_.Launch(step));
  steps_by_id_[id] = step_name;
  return id;
}

std::string SlurmContainerLauncher::FindStep(const std::string& step_name) {
  if (slurm_job_id_.empty()) return "";
  auto out = commands_.Run({"squeue", "-h", "--steps", "--jobs=" + slurm_job_id_, "-o", "%i %j"});
  if (!out.ok() || !out->ok()) return "";
  std::stringstream lines(out->out);
  for (std::string id, name; lines >> id >> name;) {
    if (name == step_name) return id;
  }
  return "";
}

void SlurmContainerLauncher::Stop(const std::string& container_id, int grace_ms) {
  if (end_steps_at_ms_.count(container_id)) return;  // already asked
  auto known = steps_by_id_.find(container_id);
  std::string step = known != steps_by_id_.end() ? FindStep(known->second) : "";
  int64_t now = clock_.NowMillis();
  if (!step.empty()) {
    auto out = commands_.Run({"scancel", "--quiet", "--signal=TERM", step});
    if (out.ok() && out->ok()) {
      end_steps_at_ms_[container_id] = now + grace_ms;
      return;
    }
  }
  // Slurm does not list the step yet (squeue lags srun by up to a few seconds) or would
  // not signal it. Cancelling it through srun would SIGKILL the program at once; its agent
  // learns of the stop from its next heartbeat's answer and gives the program its grace,
  // so srun is stopped only once that has had time to happen.
  end_steps_at_ms_[container_id] = now + kAgentHearsWithinMs + grace_ms;
}

std::vector<std::pair<std::string, ExitInfo>> SlurmContainerLauncher::Poll() {
  int64_t now = clock_.NowMillis();
  for (auto& [id, at] : end_steps_at_ms_) {
    if (at != 0 && now >= at) {
      steps_.Stop(id, 0);  // the agent did not end its task within the grace: srun cancels the step
      at = 0;
    }
  }
  std::vector<std::pair<std::string, ExitInfo>> ended = steps_.Poll();
  for (const auto& [id, exit] : ended) {
    end_steps_at_ms_.erase(id);
    steps_by_id_.erase(id);
  }
  return ended;
}

}  // namespace shoal
