#include "backend/slurm/slurm_state.h"

#include <algorithm>
#include <set>
#include <sstream>

namespace shoal {
namespace {

std::string Text(const Json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

int64_t Number(const Json& object, const char* key, int64_t fallback = 0) {
  if (!object.is_object()) return fallback;
  auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return fallback;
  double value = it->get<double>();
  return value >= -1e15 && value <= 1e15 ? static_cast<int64_t>(value) : fallback;
}

// A component that ended badly outranks one that completed; a live one outranks both
// (the job is not over yet).
int Rank(const SlurmJobState& s) {
  if (!IsFinalSlurmState(s.state)) return 3;
  if (IsClusterFailure(s.state)) return 2;
  return s.state == "COMPLETED" ? 0 : 1;
}

// Folds a component into its job's state.
void Fold(std::map<std::string, SlurmJobState>& jobs, const std::string& leader, bool is_leader,
          const SlurmJobState& component) {
  auto [it, inserted] = jobs.emplace(leader, component);
  if (inserted) return;
  SlurmJobState& job = it->second;
  SlurmJobState merged = Rank(component) > Rank(job) ? component : job;
  // The batch script, and so the AM's exit, belongs to the leader.
  const SlurmJobState& leader_state = is_leader ? component : job;
  merged.exit_code = leader_state.exit_code;
  merged.signal = leader_state.signal;
  merged.preempted = job.preempted || component.preempted;
  if (!job.nodes.empty() && !component.nodes.empty() && job.nodes != component.nodes) {
    merged.nodes = is_leader ? component.nodes + "," + job.nodes : job.nodes + "," + component.nodes;
  }
  job = merged;
}

Result<Json> JobsArray(const std::string& text, const char* what) {
  ASSIGN_OR_RETURN(Json doc, ParseJson(text, what));
  if (!doc.is_object() || !doc.contains("jobs") || !doc["jobs"].is_array()) {
    return InvalidArgument(std::string(what) + " has no \"jobs\" list");
  }
  return doc["jobs"];
}

const std::map<std::string, std::string>& PendingWords() {
  static const std::map<std::string, std::string> words{
      {"Resources", "the nodes it needs are busy"},
      {"Priority", "jobs of higher priority go first"},
      {"ReqNodeNotAvail", "some nodes it needs are unavailable (down or drained)"},
      {"PartitionNodeLimit", "it asks for more nodes than the partition allows"},
      {"PartitionTimeLimit", "it asks for more time than the partition allows"},
      {"PartitionDown", "the partition is down"},
      {"NodeDown", "a node it needs is down"},
      {"BeginTime", "its start time has not come"},
      {"Dependency", "it waits for another job"},
      {"QOSMaxJobsPerUserLimit", "the user's job limit is reached"},
      {"AssocGrpGRES", "the account's GPU limit is reached"},
      {"JobHeldAdmin", "an administrator holds it"},
      {"JobHeldUser", "it is held"},
      {"BadConstraints", "no node can ever satisfy it"},
  };
  return words;
}

}  // namespace

bool IsFinalSlurmState(const std::string& state) {
  static const std::set<std::string> live{"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED",
                                          "REQUEUED", "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED",
                                          "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD", "SPECIAL_EXIT", ""};
  return !live.count(state);
}

bool IsClusterFailure(const std::string& state) {
  static const std::set<std::string> failures{"NODE_FAIL", "PREEMPTED", "TIMEOUT", "BOOT_FAIL", "DEADLINE",
                                              "OUT_OF_MEMORY"};
  return failures.count(state) > 0;
}

Result<std::map<std::string, SlurmJobState>> ParseSqueueJson(const std::string& text) {
  ASSIGN_OR_RETURN(Json list, JobsArray(text, "squeue's JSON"));
  std::map<std::string, SlurmJobState> jobs;
  for (const Json& entry : list) {
    int64_t id = Number(entry, "job_id", -1);
    if (id <= 0) continue;
    SlurmJobState state;
    // 22.05 gives a string; later releases a list of strings.
    if (entry.contains("job_state") && entry["job_state"].is_array() && !entry["job_state"].empty() &&
        entry["job_state"][0].is_string()) {
      state.state = entry["job_state"][0].get<std::string>();
    } else {
      state.state = Text(entry, "job_state");
    }
    state.reason = Text(entry, "state_reason");
    state.nodes = Text(entry, "nodes");
    state.preempted = Number(entry, "preempt_time") > 0;
    int64_t raw = Number(entry, "exit_code");  // a wait status
    state.signal = static_cast<int>(raw & 0x7f);
    state.exit_code = static_cast<int>((raw >> 8) & 0xff);
    int64_t het = Number(entry, "het_job_id");
    std::string leader = std::to_string(het > 0 ? het : id);
    Fold(jobs, leader, het <= 0 || het == id, state);
  }
  return jobs;
}

Result<std::map<std::string, SlurmJobState>> ParseSacctJson(const std::string& text) {
  ASSIGN_OR_RETURN(Json list, JobsArray(text, "sacct's JSON"));
  std::map<std::string, SlurmJobState> jobs;
  for (const Json& entry : list) {
    int64_t id = Number(entry, "job_id", -1);
    if (id <= 0) continue;
    SlurmJobState state;
    const Json empty;
    const Json& current = entry.is_object() && entry.contains("state") ? entry["state"] : empty;
    state.state = Text(current, "current");
    state.reason = Text(current, "reason");
    state.nodes = Text(entry, "nodes");
    const Json& exit = entry.is_object() && entry.contains("exit_code") ? entry["exit_code"] : empty;
    state.exit_code = static_cast<int>(Number(exit, "return_code"));
    if (exit.is_object() && exit.contains("signal")) state.signal = static_cast<int>(Number(exit["signal"], "signal_id"));
    const Json& het = entry.is_object() && entry.contains("het") ? entry["het"] : empty;
    int64_t het_id = Number(het, "job_id");
    std::string leader = std::to_string(het_id > 0 ? het_id : id);
    Fold(jobs, leader, het_id <= 0 || het_id == id, state);
  }
  return jobs;
}

Result<std::map<std::string, SlurmJobState>> ParseScontrolJobs(const std::string& text) {
  std::map<std::string, SlurmJobState> jobs;
  // Records are separated by blank lines; each holds Key=Value words.
  std::stringstream in(text);
  std::string line, record;
  auto flush = [&] {
    std::map<std::string, std::string> fields;
    std::stringstream words(record);
    std::string word;
    while (words >> word) {
      size_t eq = word.find('=');
      if (eq != std::string::npos && eq > 0 && !fields.count(word.substr(0, eq))) {
        fields[word.substr(0, eq)] = word.substr(eq + 1);
      }
    }
    record.clear();
    if (!fields.count("JobId") || !fields.count("JobState")) return;
    SlurmJobState state;
    state.state = fields["JobState"];
    state.reason = fields.count("Reason") ? fields["Reason"] : "";
    state.nodes = fields.count("NodeList") && fields["NodeList"] != "(null)" ? fields["NodeList"] : "";
    state.preempted = fields.count("PreemptTime") && fields["PreemptTime"] != "None" && !fields["PreemptTime"].empty();
    std::string exit = fields.count("ExitCode") ? fields["ExitCode"] : "0:0";
    size_t colon = exit.find(':');
    state.exit_code = std::atoi(exit.substr(0, colon).c_str());
    state.signal = colon == std::string::npos ? 0 : std::atoi(exit.substr(colon + 1).c_str());
    std::string id = fields["JobId"];
    std::string leader = fields.count("HetJobId") ? fields["HetJobId"] : id;
    if (leader.empty() || leader.find_first_not_of("0123456789") != std::string::npos) return;
    Fold(jobs, leader, leader == id, state);
  };
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) {
      flush();
    } else {
      record += " " + line;
    }
  }
  flush();
  if (jobs.empty() && text.find("JobId=") == std::string::npos) {
    return InvalidArgument("scontrol's answer holds no job");
  }
  return jobs;
}

std::string DescribeWaiting(const SlurmJobState& job) {
  if (job.state != "PENDING" && job.state != "REQUEUED" && job.state != "SUSPENDED") return "";
  std::string why;
  auto it = PendingWords().find(job.reason);
  if (it != PendingWords().end()) why = ": " + it->second;
  std::string reason = job.reason.empty() || job.reason == "None" ? "" : ", " + job.reason;
  return "waiting for Slurm" + why + " (" + job.state + reason + ")";
}

std::string DescribeClusterEnd(const SlurmJobState& job, const std::vector<std::string>& down_nodes) {
  std::string nodes;
  for (const std::string& n : down_nodes) nodes += (nodes.empty() ? "" : ", ") + n;
  if (job.state == "NODE_FAIL") {
    return (down_nodes.empty() ? "a node of the job (" + job.nodes + ")"
                               : std::string(down_nodes.size() > 1 ? "nodes " : "node ") + nodes) +
           " failed; Slurm ended the attempt (NODE_FAIL)";
  }
  if (job.state == "PREEMPTED" || job.preempted) return "Slurm preempted the attempt for another job (PREEMPTED)";
  if (job.state == "TIMEOUT") return "the attempt reached its Slurm time limit (TIMEOUT)";
  if (job.state == "BOOT_FAIL") return "Slurm could not boot the attempt's nodes (BOOT_FAIL)";
  if (job.state == "DEADLINE") return "the attempt passed its Slurm deadline (DEADLINE)";
  if (job.state == "OUT_OF_MEMORY") return "a step of the attempt ran out of memory (OUT_OF_MEMORY)";
  if (job.state == "CANCELLED") return "the Slurm job was cancelled outside Shoal (CANCELLED)";
  return "Slurm ended the attempt (" + job.state + (job.reason.empty() || job.reason == "None" ? "" : ", " + job.reason) + ")";
}

std::vector<std::string> UnhealthyNodes(const std::string& sinfo_text) {
  std::vector<std::string> bad;
  std::stringstream lines(sinfo_text);
  std::string line;
  while (std::getline(lines, line)) {
    std::stringstream fields(line);
    std::string name, state;
    if (!(fields >> name >> state)) continue;
    bool unhealthy = state.find("down") != std::string::npos || state.find("fail") != std::string::npos ||
                     state.find("drain") != std::string::npos || state.ends_with("*");
    if (unhealthy && std::find(bad.begin(), bad.end(), name) == bad.end()) bad.push_back(name);
  }
  return bad;
}

Result<std::vector<SlurmNode>> ParseSinfoJson(const std::string& text) {
  ASSIGN_OR_RETURN(Json doc, ParseJson(text, "sinfo's JSON"));
  if (!doc.is_object() || !doc.contains("nodes") || !doc["nodes"].is_array()) {
    return InvalidArgument("sinfo's JSON has no \"nodes\" list");
  }
  std::vector<SlurmNode> nodes;
  for (const Json& entry : doc["nodes"]) {
    SlurmNode node;
    node.name = Text(entry, "name");
    if (node.name.empty()) continue;
    node.address = Text(entry, "address");
    if (node.address.empty()) node.address = node.name;
    if (entry.contains("state") && entry["state"].is_array() && !entry["state"].empty() && entry["state"][0].is_string()) {
      node.state = entry["state"][0].get<std::string>();
    } else {
      node.state = Text(entry, "state");
    }
    for (char& c : node.state) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (entry.contains("state_flags") && entry["state_flags"].is_array()) {
      for (const Json& flag : entry["state_flags"]) {
        if (flag.is_string()) {
          std::string f = flag.get<std::string>();
          for (char& c : f) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
          node.state += "+" + f;
        }
      }
    }
    node.resources.cpus = static_cast<double>(std::max<int64_t>(0, Number(entry, "cpus")));
    node.resources.memory_bytes = std::max<int64_t>(0, Number(entry, "real_memory")) << 20;
    node.resources.gpus = GpusInGres(Text(entry, "gres"));
    node.reason = Text(entry, "reason");
    node.allocated.cpus = static_cast<double>(std::max<int64_t>(0, Number(entry, "alloc_cpus")));
    node.allocated.memory_bytes = std::max<int64_t>(0, Number(entry, "alloc_memory")) << 20;
    node.allocated.gpus = GpusInGres(Text(entry, "gres_used"));
    nodes.push_back(node);
  }
  return nodes;
}

int GpusInGres(const std::string& gres) {
  int total = 0;
  std::stringstream in(gres);
  std::string item;
  while (std::getline(in, item, ',')) {
    item = item.substr(0, item.find('('));
    if (!item.starts_with("gpu")) continue;
    std::string count = item.substr(item.rfind(':') + 1);
    if (item.find(':') == std::string::npos || count.empty() || count.size() > 6 ||
        count.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    total += std::stoi(count);
  }
  return total;
}

namespace {

bool Usable(const SlurmNode& node) {
  const std::string& s = node.state;
  return s.find("down") == std::string::npos && s.find("drain") == std::string::npos &&
         s.find("fail") == std::string::npos && s.find("not_responding") == std::string::npos;
}

}  // namespace

int UsableNodeCount(const std::vector<SlurmNode>& nodes) {
  std::set<std::string> names;  // sinfo lists a node once per partition
  for (const SlurmNode& node : nodes) {
    if (Usable(node)) names.insert(node.name);
  }
  return static_cast<int>(names.size());
}

ClusterCapacity CapacityOf(const std::vector<SlurmNode>& nodes) {
  ClusterCapacity capacity;
  std::set<std::string> counted;
  for (const SlurmNode& node : nodes) {
    if (!Usable(node) || !counted.insert(node.name).second) continue;
    capacity.total += node.resources;
    Resources& big = capacity.largest;
    big.cpus = std::max(big.cpus, node.resources.cpus);
    big.memory_bytes = std::max(big.memory_bytes, node.resources.memory_bytes);
    big.gpus = std::max(big.gpus, node.resources.gpus);
  }
  return capacity;
}

}  // namespace shoal
