#include "backend/slurm/slurm_launcher.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "backend/slurm/role_step.h"
#include "common/files.h"
#include "common/log.h"
#include "protocol/task_messages.h"

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
  ASSIGN_OR_RETURN(auto plan, PlanSteps(env, ExpandNodeList));
  std::map<std::string, std::string> addresses = ParseNodeAddresses(Get(env, kSlurmNodeAddressesVariable));
  if (addresses.empty()) {  // a batch script of an older server
    ASSIGN_OR_RETURN(CommandOutput out, commands.Run({"sinfo", "-h", "-N", "-o", "%N %o"}));
    if (!out.ok()) return Unavailable("sinfo cannot list the nodes' addresses: " + out.Said());
    std::stringstream lines(out.out);
    for (std::string node, address; lines >> node >> address;) addresses[node] = address;
  }
  std::string self = Get(env, "SLURMD_NODENAME");
  std::string host = addresses.count(self) ? addresses[self] : self;
  if (host.empty()) return InvalidArgument("SLURMD_NODENAME is not set: the AM must run in a Slurm batch job");
  return std::unique_ptr<SlurmContainerLauncher>(new SlurmContainerLauncher(
      std::move(plan), std::move(addresses), host, Get(env, "SLURM_JOB_ID"), commands, processes, clock));
}

std::vector<Result<std::string>> SlurmContainerLauncher::LaunchAll(const std::vector<ContainerLaunch>& launches) {
  std::vector<Result<std::string>> ids(launches.size(), Internal("not launched"));
  std::map<std::string, std::vector<size_t>> by_role;  // role -> positions in `launches`, by index
  for (size_t i = 0; i < launches.size(); ++i) by_role[launches[i].role].push_back(i);
  for (auto& [role, positions] : by_role) {
    std::sort(positions.begin(), positions.end(),
              [&](size_t a, size_t b) { return launches[a].index < launches[b].index; });
    std::vector<ContainerLaunch> tasks;
    for (size_t at : positions) tasks.push_back(launches[at]);
    bool whole_role = plan_.count(role) && plan_[role].size() == tasks.size();
    for (size_t k = 0; k < tasks.size(); ++k) whole_role = whole_role && tasks[k].index == static_cast<int>(k);
    // Tasks with GPUs keep a step each, so Slurm binds each one's GPUs to it alone.
    if (whole_role && tasks.size() > 1 && tasks[0].resources.gpus == 0) {
      auto shared = LaunchRoleStep(tasks);
      if (shared.ok()) {
        for (size_t k = 0; k < positions.size(); ++k) ids[positions[k]] = (*shared)[k];
        continue;
      }
      LogInfo("the tasks of " + role + " get a step each: " + shared.status().message());
    }
    for (size_t at : positions) ids[at] = Launch(launches[at]);
  }
  return ids;
}

Result<std::vector<std::string>> SlurmContainerLauncher::LaunchRoleStep(const std::vector<ContainerLaunch>& launches) {
  const ContainerLaunch& first = launches.front();
  ASSIGN_OR_RETURN(std::vector<std::string> agent, ShareArgv(launches));
  ASSIGN_OR_RETURN(auto env, ShareEnv(launches, protocol::kTaskTokenVariable));
  ASSIGN_OR_RETURN(std::string agent_output, ShareLog(launches));
  agent.insert(agent.end(), {"--node-addresses", NodeAddresses(addresses_), "--gpus-from-env", "--index-from-env",
                             "SLURM_PROCID"});
  ContainerLaunch step = first;
  step.env = std::move(env);
  step.agent_log = first.workdir + "/" + first.role + ".srun.log";
  std::string step_name = "shoal-" + first.role;
  step.argv = RoleStepArgv(plan_[first.role].front().het_group, step_name, static_cast<int>(launches.size()),
                           first.resources, agent_output, agent);
  ASSIGN_OR_RETURN(std::string srun_id, steps_.Launch(step));
  steps_by_id_[srun_id] = step_name;
  SharedStep& shared = shared_[srun_id];
  shared.srun_log = step.agent_log;
  for (const ContainerLaunch& launch : launches) {
    std::string id = srun_id + "/" + std::to_string(launch.index);
    shared.tasks.push_back(id);
    shared_task_srun_[id] = srun_id;
  }
  return shared.tasks;
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
  int64_t now = clock_.NowMillis();
  if (auto shared = shared_task_srun_.find(container_id); shared != shared_task_srun_.end()) {
    // Signalling the step would stop every task of it: this one's agent hears of its stop
    // from its next heartbeat's answer. srun is stopped when one of the asked is late.
    auto [at, first] = end_steps_at_ms_.try_emplace(shared->second, now + kAgentHearsWithinMs + grace_ms);
    if (!first && at->second != 0) at->second = std::min(at->second, now + kAgentHearsWithinMs + grace_ms);
    return;
  }
  if (end_steps_at_ms_.count(container_id)) return;  // already asked
  auto known = steps_by_id_.find(container_id);
  std::string step = known != steps_by_id_.end() ? FindStep(known->second) : "";
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

void SlurmContainerLauncher::Kill(const std::string& container_id) {
  auto shared = shared_task_srun_.find(container_id);
  steps_.Kill(shared != shared_task_srun_.end() ? shared->second : container_id);
}

std::vector<std::pair<std::string, ExitInfo>> SlurmContainerLauncher::ReadTaskEnds() {
  std::vector<std::pair<std::string, ExitInfo>> ended;
  for (auto& [srun_id, step] : shared_) {
    // Poll runs on every agent message: the log is read only once it has grown (a task ended).
    std::error_code no_size;
    auto size = std::filesystem::file_size(step.srun_log, no_size);
    if (no_size || size <= step.log_read) continue;
    auto text = ReadFile(step.srun_log);
    if (!text.ok() || text->size() <= step.log_read) continue;
    size_t complete = text->rfind('\n');
    if (complete == std::string::npos || complete < step.log_read) continue;
    std::string lines = text->substr(step.log_read, complete + 1 - step.log_read);
    step.log_read = complete + 1;
    for (const auto& [index, exit] : ParseSrunTaskEnds(lines)) {
      if (index < 0 || static_cast<size_t>(index) >= step.tasks.size()) continue;
      if (step.ended.insert(step.tasks[index]).second) ended.emplace_back(step.tasks[index], exit);
    }
  }
  return ended;
}

std::vector<std::pair<std::string, ExitInfo>> SlurmContainerLauncher::Poll() {
  int64_t now = clock_.NowMillis();
  for (auto& [id, at] : end_steps_at_ms_) {
    if (at != 0 && now >= at) {
      steps_.Stop(id, 0);  // the agent did not end its task within the grace: srun cancels the step
      at = 0;
    }
  }
  std::vector<std::pair<std::string, ExitInfo>> ended = ReadTaskEnds();
  for (const auto& [id, exit] : steps_.Poll()) {
    end_steps_at_ms_.erase(id);
    steps_by_id_.erase(id);
    auto shared = shared_.find(id);
    if (shared == shared_.end()) {
      ended.emplace_back(id, exit);
      continue;
    }
    for (const std::string& task : shared->second.tasks) {
      if (!shared->second.ended.count(task)) ended.emplace_back(task, exit);
      shared_task_srun_.erase(task);
    }
    shared_.erase(shared);
  }
  return ended;
}

}  // namespace shoal
