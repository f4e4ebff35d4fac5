// SlurmJob: how a Shoal job attempt becomes a Slurm batch job, and how a task becomes a
// job step. Pure functions over plain data; the backend and the launcher run what they
// return.
//
// Mapping (docs/slurm.md):
//  - One attempt is one batch job. With several roles it is a heterogeneous job, one
//    component per role in the spec's order; with one role, a plain job.
//  - A component asks for the role's tasks (--ntasks), each with --cpus-per-task (CPUs
//    rounded up), memory as --mem-per-cpu, and --gpus-per-task (GPUs as GRES).
//  - The batch script runs the application master, which starts the container agents of
//    a role's tasks as one step (srun --ntasks=N), or, for tasks with GPUs, each as one
//    step on the node Slurm gave it, with the task's own CPUs, memory and GPUs (--exact),
//    so Slurm sets its CUDA_VISIBLE_DEVICES.
//  - The batch job is never requeued by Slurm: Shoal's own retries make the next attempt.
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "spec/job_spec.h"

namespace shoal {

// The role order of the components, exported to the AM as SHOAL_SLURM_ROLES ("worker,ps").
inline constexpr const char* kSlurmRolesVariable = "SHOAL_SLURM_ROLES";
// Each node's address, "node1=10.0.0.1,node2=10.0.0.2" (role_step.h's NodeAddresses), so
// the AM need not ask sinfo before it starts the steps.
inline constexpr const char* kSlurmNodeAddressesVariable = "SHOAL_SLURM_NODE_ADDRESSES";

struct BatchJob {
  std::string name;                         // --job-name
  std::string attempt_dir;                  // --chdir; the AM's log is <dir>/am.log
  std::vector<RoleSpec> roles;              // one component each
  std::vector<std::string> am_argv;         // the application master's command line
  std::map<std::string, std::string> env;   // exported by the script before the AM starts
  std::vector<std::string> extra_options;   // the administrator's, e.g. --partition=gpu
};

// --time for an attempt whose spec sets timeouts.job: that limit plus a minute, in whole
// minutes (Slurm's unit), so Shoal ends a job that runs too long with its own words and
// Slurm's limit only frees the nodes when Shoal cannot (its server gone). "" without one,
// or when the administrator's options already set a time (--time=, -t).
std::string SlurmTimeOption(int64_t job_timeout_ms, const std::vector<std::string>& admin_options);

// Every Slurm job of a Shoal server is named shoal-<server id>-<job id>-<attempt>: unique
// across the servers (homes, machines) that share a cluster. The id is the first 8 hex
// digits of a hash of the server's host name and home; it stays the same across restarts.
std::string SlurmJobName(const std::string& server_id, const std::string& job_id, int attempt);
// --comment for an attempt's batch job, so that an administrator's squeue or sacct tells
// whose it is: "shoal:user=ann,job=job-4,attempt=1,server=http://10.0.0.1:8080". Characters
// outside [A-Za-z0-9._:/@=+-] in the values become '_' (it goes into a #SBATCH line).
std::string SlurmComment(const std::string& user, const std::string& job_id, int attempt, const std::string& server_url);

// Whole CPUs and MiB, as Slurm counts them.
int SlurmCpus(const Resources& r);
int64_t SlurmMemoryMb(const Resources& r);

// The #SBATCH options of one component.
std::vector<std::string> ComponentOptions(const RoleSpec& role);

// The batch script: #SBATCH lines (components separated by `#SBATCH hetjob`), the
// exported variables, and `exec` of the AM.
std::string BatchScript(const BatchJob& job);

// The sbatch answer with --parsable: "123" or "123;cluster" -> "123".
Result<std::string> ParseSbatchJobId(const std::string& out);

struct StepPlacement {
  std::optional<int> het_group;  // absent for a plain (one-role) job
  std::string node;
};

// The srun command line that starts one task's container agent on its node.
std::vector<std::string> StepArgv(const StepPlacement& where, const std::string& step_name,
                                  const Resources& task, const std::vector<std::string>& agent_argv);

// The srun command line that starts the agents of all `tasks` tasks of a role as one step
// (role_step.h), each with the role's CPUs and memory (as the batch job's component asks
// for them); `agent_output` is their log file pattern (srun --output, with %t).
std::vector<std::string> RoleStepArgv(std::optional<int> het_group, const std::string& step_name, int tasks,
                                      const Resources& task, const std::string& agent_output,
                                      const std::vector<std::string>& agent_argv);

// SLURM_TASKS_PER_NODE's form, "2(x3),1" -> {2, 2, 2, 1}; more than 65536 nodes is an error.
Result<std::vector<int>> ParseTasksPerNode(const std::string& text);

// Which node each task of a component runs on: tasks fill nodes in order, as many on
// each as Slurm's tasks-per-node says.
Result<std::vector<std::string>> PlaceTasks(const std::vector<std::string>& nodes, const std::vector<int>& tasks_per_node,
                                            int tasks);

}  // namespace shoal
