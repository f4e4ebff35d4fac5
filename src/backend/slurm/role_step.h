// RoleStep: one Slurm step for all the tasks of a role, as a plain `srun --ntasks=N` does,
// instead of one step per task. Slurm starts each step through its controller and a
// slurmstepd per node; starting one step instead of N is most of what a Shoal job used
// to cost beyond a plain batch script (docs/benchmarks.md, bench/slurm).
//
// The tasks' agents then share one command line and one environment, so what differs
// between tasks travels as a template the agent fills in from its own SLURM_PROCID:
//  - an argument that differs only by the task's index becomes a template with
//    kIndexPlaceholder where the index was (".../worker-%t.log"); the agent is started
//    with `--index-from-env SLURM_PROCID` and replaces the placeholder in every argument;
//  - the task tokens travel as one list (kTaskTokensVariable, comma-separated, by index),
//    from which the agent takes its own and wipes the rest from its memory;
//  - each agent's address comes from the node it finds itself on (`--node-addresses`).
// srun prints, at once, how each task that did not exit 0 ended ("srun: error: node1:
// task 1: Killed"); ParseSrunTaskEnds reads those lines, so one task's agent dying is
// known as quickly as when it had a step of its own.
//
// Contract:
//  - IndexTemplate(values) with values[i] the argument of task i: the template with
//    kIndexPlaceholder, or an error when the values differ otherwise, or when one holds
//    '%' already (it could not be told apart from the placeholder).
//  - ShareArgv / ShareLog: the shared command line and agent log of launches 0..N-1 of
//    one role, in index order; an error when their environments differ in more than the
//    task token or their command lines do not line up (the launcher then starts one step
//    per task).
//  - ParseSrunTaskEnds(text): every "srun: error: NODE: task(s) LIST: WHAT" line, as
//    (task, how it ended); other lines are skipped. LIST is srun's "0", "1-3" or "0,2-3".
//    WHAT is "Exited with exit code N" or a signal's description (strsignal). Bounded:
//    ranges beyond kMaxStepTasks are skipped.
//  - ExpandNodeList: Slurm's node list ("node[1-3,07],gpu1") as names, in order, the
//    numbers keeping their zero padding; at most kMaxStepTasks names, else an error.
//  - NodeAddresses / ParseNodeAddresses: "node1=10.0.0.1,node2=10.0.0.2" both ways.
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "backend/cluster_backend.h"
#include "common/process.h"
#include "common/status.h"

namespace shoal {

inline constexpr const char* kIndexPlaceholder = "%t";  // Slurm's own, as in srun --output
inline constexpr const char* kTaskTokensVariable = "SHOAL_TASK_TOKENS";
inline constexpr int kMaxStepTasks = 1 << 16;

Result<std::string> IndexTemplate(const std::vector<std::string>& values);

// The command line shared by the launches (index order), without the agent's
// --index-from-env, which the launcher adds.
Result<std::vector<std::string>> ShareArgv(const std::vector<ContainerLaunch>& launches);
// The shared environment: the launches' own, with the task tokens as one list.
Result<std::map<std::string, std::string>> ShareEnv(const std::vector<ContainerLaunch>& launches,
                                                    const std::string& token_variable);
// The agents' log file pattern for srun --output.
Result<std::string> ShareLog(const std::vector<ContainerLaunch>& launches);

std::vector<std::pair<int, ExitInfo>> ParseSrunTaskEnds(const std::string& text);

Result<std::vector<std::string>> ExpandNodeList(const std::string& list);

std::string NodeAddresses(const std::map<std::string, std::string>& addresses);
std::map<std::string, std::string> ParseNodeAddresses(const std::string& text);

}  // namespace shoal
