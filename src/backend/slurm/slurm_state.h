// SlurmState: what Slurm says about a batch job and about its nodes, read from squeue's,
// sacct's and sinfo's JSON (and `scontrol show job` text where no JSON is available),
// and put into words for `shoal status`.
//
// Contract:
//  - The parsers never trust their input: wrong types, missing fields, unknown states
//    and garbage give an error or a field left empty, never a crash.
//  - A heterogeneous job's components are folded into one state under the leader's id:
//    the job is final only when every component is, and a component that ended badly
//    (NODE_FAIL, TIMEOUT, PREEMPTED ...) decides how the whole job ended.
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/status.h"
#include "spec/fit.h"

namespace shoal {

struct SlurmJobState {
  std::string state;     // PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, NODE_FAIL, ...
  std::string reason;    // Slurm's reason: Resources, Priority, None ...
  std::string nodes;     // Slurm's node list, e.g. node[1-2]
  int exit_code = 0;     // the batch script's (the AM's) exit code
  int signal = 0;        // or the signal that ended it
  // Slurm chose the job for preemption (squeue's preempt_time, scontrol's PreemptTime):
  // whatever state it ends in, the cluster ended it for another job.
  bool preempted = false;
};

// Whether Slurm is done with a job in this state.
bool IsFinalSlurmState(const std::string& state);
// States in which the cluster, not the AM, ended the job (NODE_FAIL, PREEMPTED, TIMEOUT ...).
bool IsClusterFailure(const std::string& state);

// squeue --json: leader job id -> state.
Result<std::map<std::string, SlurmJobState>> ParseSqueueJson(const std::string& text);
// sacct --json (Slurm 22.05's shape): leader job id -> state.
Result<std::map<std::string, SlurmJobState>> ParseSacctJson(const std::string& text);
// `scontrol show job ID` text, the fallback where sacct has no database.
Result<std::map<std::string, SlurmJobState>> ParseScontrolJobs(const std::string& text);

// Words for a job still waiting or running: "waiting for Slurm: ... (PENDING, Resources)".
// Empty for a running job.
std::string DescribeWaiting(const SlurmJobState& job);
// Words for a job the cluster ended; `down_nodes` are the job's nodes Slurm marks down.
std::string DescribeClusterEnd(const SlurmJobState& job, const std::vector<std::string>& down_nodes);

struct SlurmNode {
  std::string name;
  std::string address;
  std::string state;  // idle, mixed, allocated, down, drained ...
  std::string reason; // why it is down or drained, as the administrator or Slurm set it
  Resources resources;
  Resources allocated;  // what jobs (anyone's) hold there now
};
// sinfo --json.
Result<std::vector<SlurmNode>> ParseSinfoJson(const std::string& text);
// `sinfo -h -N -o "%N %T"`'s lines: the nodes that are down, failing, drained or not
// responding (a state ending in '*'), each once, in the order listed.
std::vector<std::string> UnhealthyNodes(const std::string& sinfo_text);
// The GPUs in a GRES string: "gpu:2", "gpu:a100:4(S:0-1),shard:8" -> 2, 4.
int GpusInGres(const std::string& gres);
// The capacity of the nodes that can take jobs (not down, drained or failing), and how many they are.
ClusterCapacity CapacityOf(const std::vector<SlurmNode>& nodes);
int UsableNodeCount(const std::vector<SlurmNode>& nodes);

}  // namespace shoal
