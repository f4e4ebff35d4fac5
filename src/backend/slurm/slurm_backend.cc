#include "backend/slurm/slurm_backend.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <sstream>
#include <thread>

#include "backend/slurm/role_step.h"
#include "backend/slurm/slurm_job.h"
#include "backend/slurm/slurm_job_options.h"
#include "common/files.h"
#include "common/log.h"
#include "isolation/unix_account.h"
#include "protocol/attempt_messages.h"

namespace shoal {
namespace {

std::string AttemptKey(const AttemptLaunch& launch) { return launch.job_id + "/" + std::to_string(launch.attempt); }

void SleepMillis(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

}  // namespace

SlurmBackend::SlurmBackend(SlurmCommands& commands, std::string shoal_executable, SlurmOptions options,
                           const Clock& clock)
    : commands_(commands), executable_(std::move(shoal_executable)), options_(std::move(options)), clock_(clock) {}

Result<std::vector<SlurmNode>> SlurmBackend::ReadNodes() {
  std::vector<std::string> argv{"sinfo", "--json"};
  if (!options_.partition.empty()) argv.push_back("--partition=" + options_.partition);
  ASSIGN_OR_RETURN(CommandOutput out, commands_.Run(argv));
  if (!out.ok()) return Unavailable("cannot reach Slurm: sinfo said: " + out.Said());
  ASSIGN_OR_RETURN(std::vector<SlurmNode> nodes, ParseSinfoJson(out.out));
  if (!options_.partition.empty()) {
    // sinfo --json lists every node whatever the filter; keep the partition's own.
    ASSIGN_OR_RETURN(CommandOutput names, commands_.Run({"sinfo", "-h", "-N", "-o", "%N", "--partition=" + options_.partition}));
    std::set<std::string> in_partition;
    std::stringstream lines(names.out);
    for (std::string name; lines >> name;) in_partition.insert(name);
    std::erase_if(nodes, [&](const SlurmNode& n) { return !in_partition.count(n.name); });
  }
  std::set<std::string> seen;  // sinfo lists a node once per partition
  std::erase_if(nodes, [&](const SlurmNode& n) { return !seen.insert(n.name).second; });
  return nodes;
}

std::vector<ClusterNode> SlurmBackend::Nodes() {
  std::lock_guard lock(nodes_mutex_);
  if (nodes_read_ms_ == 0 || clock_.NowMillis() - nodes_read_ms_ >= kNodesMaxAgeMs) {
    if (auto nodes = ReadNodes(); nodes.ok()) {
      nodes_.clear();
      for (const SlurmNode& n : *nodes) nodes_.push_back(ClusterNode{n.name, n.state, n.reason, n.resources, n.allocated});
      nodes_read_ms_ = clock_.NowMillis();
    }
  }
  return nodes_;
}

Status SlurmBackend::Connect() {
  ASSIGN_OR_RETURN(std::vector<SlurmNode> nodes, ReadNodes());
  for (const SlurmNode& node : nodes) node_addresses_[node.name] = node.address.empty() ? node.name : node.address;
  capacity_ = CapacityOf(nodes);
  usable_nodes_ = UsableNodeCount(nodes);
  if (capacity_.total.cpus <= 0) {
    return Unavailable("Slurm has no usable node" +
                       (options_.partition.empty() ? std::string() : " in partition '" + options_.partition + "'") +
                       "; `sinfo -N` shows their states");
  }
  return Status::Ok();
}

Status SlurmBackend::Accepts(const JobSpec& spec) const {
  if (!spec.slurm.empty()) RETURN_IF_ERROR(CheckJobOptions(spec));
  if (spec.framework == "mpi") {
    return InvalidArgument("framework: mpi jobs do not run on the Slurm backend yet; fix: use framework: generic with "
                           "Slurm's own `srun --mpi=pmix` in the command, or the local cluster (docs/slurm.md)");
  }
  int roles = static_cast<int>(spec.roles.size());
  if (roles > usable_nodes_) {
    return InvalidArgument("roles: the job has " + std::to_string(roles) + " roles but the Slurm cluster has " +
                           std::to_string(usable_nodes_) + " usable node(s): each role is a component of a "
                           "heterogeneous Slurm job, and Slurm gives each component nodes of its own; "
                           "fix: merge roles, or run on a cluster with more nodes");
  }
  return Status::Ok();
}

SlurmDefaults SlurmBackend::Defaults() const {
  return SlurmDefaults{options_.partition, options_.sbatch_options, options_.locked};
}

Status SlurmBackend::CheckJobOptions(const JobSpec& spec) const {
  RETURN_IF_ERROR(CheckSlurmLocks(Defaults(), spec.slurm));
  std::vector<std::string> test = {"sbatch", "--test-only"};
  for (std::string& option : AttemptSbatchOptions(Defaults(), spec)) test.push_back(std::move(option));
  test.insert(test.end(), {"--wrap", "true"});
  ASSIGN_OR_RETURN(CommandOutput out, commands_.Run(test));
  if (out.ok()) return Status::Ok();
  std::string fields;
  for (const auto& [field, option] : spec.slurm.Options()) fields += (fields.empty() ? "" : ", ") + field;
  return InvalidArgument("slurm: Slurm refused the job's options (" + fields + "): sbatch said: " + out.Said() +
                         "; fix: `sinfo -s` lists the partitions, `sacctmgr show assoc user=$USER` the accounts "
                         "and QOS, `scontrol show reservation` the reservations");
}

Result<AttemptHandle> SlurmBackend::StartAttempt(const AttemptLaunch& launch) {
  RETURN_IF_ERROR(Accepts(launch.spec));
  std::optional<UnixAccount> account;
  if (!launch.run_as.empty()) {
    ASSIGN_OR_RETURN(account, LookUpAccount(launch.run_as));
  }
  RETURN_IF_ERROR(MakeAttemptFolders(launch.attempt_dir, account ? &*account : nullptr));
  BatchJob job;
  job.name = SlurmJobName(options_.server_id, launch.job_id, launch.attempt);
  job.attempt_dir = launch.attempt_dir;
  job.roles = launch.spec.roles;
  job.am_argv = {executable_, "am", "--server", launch.server_url, "--job", launch.job_id,
                 "--attempt", std::to_string(launch.attempt), "--dir", launch.attempt_dir, "--backend", "slurm",
                 "--server-info", launch.server_info};
  job.env = {{"SHOAL_JOB_ID", launch.job_id},
             {"SHOAL_ATTEMPT", std::to_string(launch.attempt)},
             {kSlurmNodeAddressesVariable, NodeAddresses(node_addresses_)}};
  job.extra_options.push_back("--comment=" + SlurmComment(launch.spec.user, launch.job_id, launch.attempt, launch.server_url));
  for (std::string& option : AttemptSbatchOptions(Defaults(), launch.spec)) job.extra_options.push_back(std::move(option));
  std::string script_path = launch.attempt_dir + "/batch.sh";
  RETURN_IF_ERROR(WriteFileAtomic(script_path, BatchScript(job)));
  // The attempt's token travels in sbatch's exported environment, never in the script.
  std::vector<std::string> sbatch = {"sbatch", "--parsable"};
  if (account) {  // a root server submits as the job's account (sbatch lets root alone)
    sbatch.push_back("--uid=" + std::to_string(account->uid));
    sbatch.push_back("--gid=" + std::to_string(account->gid));
  }
  sbatch.push_back(script_path);
  ASSIGN_OR_RETURN(CommandOutput out, commands_.Run(sbatch,
                                                    {{protocol::kAttemptTokenVariable, launch.token}}));
  if (!out.ok()) return InvalidArgument("Slurm refused the attempt: sbatch said: " + out.Said() + "; the script is " + script_path);
  ASSIGN_OR_RETURN(std::string id, ParseSbatchJobId(out.out));
  LogInfo(launch.job_id + " attempt " + std::to_string(launch.attempt) + " is Slurm job " + id);
  std::lock_guard lock(mutex_);
  watched_[id] = Watched{};
  attempts_[AttemptKey(launch)] = id;
  return AttemptHandle{id};
}

std::map<std::string, SlurmJobState> SlurmBackend::Query(const std::vector<std::string>& ids) const {
  std::map<std::string, SlurmJobState> found;
  if (ids.empty()) return found;
  auto squeue = commands_.Run({"squeue", "--json"});
  if (!squeue.ok() || !squeue->ok()) {
    LogError("squeue failed: " + (squeue.ok() ? squeue->Said() : squeue.status().message()));
    return found;  // Slurm's controller is away: nothing is known, nothing has ended
  }
  auto listed = ParseSqueueJson(squeue->out);
  if (!listed.ok()) {
    LogError(listed.status().message());
    return found;
  }
  std::vector<std::string> missing;
  for (const std::string& id : ids) {
    if (auto it = listed->find(id); it != listed->end()) {
      found[id] = it->second;
    } else {
      missing.push_back(id);
    }
  }
  for (const std::string& id : missing) {
    // Gone from squeue (older than MinJobAge): scontrol may still know it, sacct does if
    // the cluster keeps accounting.
    auto shown = commands_.Run({"scontrol", "show", "job", id});
    if (shown.ok() && shown->ok()) {
      auto parsed = ParseScontrolJobs(shown->out);
      if (parsed.ok() && parsed->count(id)) {
        found[id] = parsed->at(id);
        continue;
      }
    }
    auto sacct = commands_.Run({"sacct", "--json", "--jobs=" + id});
    if (sacct.ok() && sacct->ok()) {
      auto parsed = ParseSacctJson(sacct->out);
      if (parsed.ok() && parsed->count(id)) {
        found[id] = parsed->at(id);
        continue;
      }
    }
    found[id] = SlurmJobState{.state = "GONE", .reason = "Slurm no longer knows the job"};
  }
  return found;
}

std::vector<std::string> SlurmBackend::DownNodes(const std::string& nodes) const {
  if (nodes.empty()) return {};
  auto out = commands_.Run({"sinfo", "-h", "-N", "-n", nodes, "-o", "%N %T"});
  if (!out.ok() || !out->ok()) return {};
  return UnhealthyNodes(out->out);
}

void SlurmBackend::Refresh(bool force) {
  // 1. which jobs are due (under the mutex), 2. Slurm's answers (without it), 3. the
  // answers applied, 4. node checks for running and failed jobs (without it), 5. applied.
  int64_t now = clock_.NowMillis();
  std::vector<std::string> ids;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [id, w] : watched_) {
      bool final = w.state && IsFinalSlurmState(w.state->state);
      if (!final && (force || w.polled_ms < 0 || now - w.polled_ms >= options_.poll_interval_ms)) ids.push_back(id);
    }
    for (const std::string& id : ids) watched_[id].polled_ms = now;
  }
  if (ids.empty()) return;
  std::map<std::string, SlurmJobState> states = Query(ids);
  std::map<std::string, std::string> check_nodes;  // job id -> its nodes, to ask sinfo about
  {
    std::lock_guard lock(mutex_);
    for (auto& [id, state] : states) {
      Watched& w = watched_[id];
      w.state = state;
      bool running_check = state.state == "RUNNING" && !state.nodes.empty() &&
                           (w.nodes_checked_ms < 0 || now - w.nodes_checked_ms >= options_.node_check_interval_ms);
      bool ended_check = w.ended_note.empty() && EndedByCluster(w);
      if (running_check) w.nodes_checked_ms = now;
      if (running_check || ended_check) check_nodes[id] = state.nodes;
    }
  }
  std::map<std::string, std::vector<std::string>> down;
  for (const auto& [id, nodes] : check_nodes) down[id] = DownNodes(nodes);
  std::lock_guard lock(mutex_);
  for (auto& [id, state] : states) {
    Watched& w = watched_[id];
    for (const std::string& node : down[id]) {
      if (state.state == "RUNNING" &&
          std::find(w.unresponsive.begin(), w.unresponsive.end(), node) == w.unresponsive.end()) {
        w.unresponsive.push_back(node);
      }
    }
    if (IsFinalSlurmState(state.state) && w.ended_note.empty()) {
      std::vector<std::string> failed_nodes;
      if (EndedByCluster(w)) {
        failed_nodes = down[id];
        if (failed_nodes.empty()) failed_nodes = w.unresponsive;
      }
      w.failed_nodes = failed_nodes;
      w.ended_note = EndedByCluster(w) ? DescribeClusterEnd(state, failed_nodes)
                     : state.state == "GONE"        ? "Slurm no longer knows job " + id
                                                    : "";
      if (!w.ended_note.empty()) LogInfo("Slurm job " + id + ": " + w.ended_note);
    }
  }
}

void SlurmBackend::StartPolling() {
  std::lock_guard lock(mutex_);
  if (poller_.joinable()) return;
  polling_ = true;
  poller_ = std::thread([this] {
    std::unique_lock lock(mutex_);
    while (polling_) {
      lock.unlock();
      Refresh(false);
      lock.lock();
      stop_polling_.wait_for(lock, std::chrono::milliseconds(std::max(50, options_.poll_interval_ms / 4)),
                             [this] { return !polling_; });
    }
  });
}

SlurmBackend::~SlurmBackend() {
  {
    std::lock_guard lock(mutex_);
    polling_ = false;
  }
  stop_polling_.notify_all();
  if (poller_.joinable()) poller_.join();
}

std::optional<ExitInfo> SlurmBackend::PollAttempt(const AttemptHandle& handle) {
  bool polling;
  {
    std::lock_guard lock(mutex_);
    watched_.try_emplace(handle.backend_id);  // an attempt of an earlier server process
    polling = poller_.joinable();
  }
  if (!polling) Refresh(false);  // no poller thread (unit tests): refresh here
  std::lock_guard lock(mutex_);
  const Watched& w = watched_[handle.backend_id];
  if (!w.state || !IsFinalSlurmState(w.state->state)) return std::nullopt;
  // The cluster ended it: not ended for the scheduler until the note says why (which node
  // failed), or the attempt would end with whatever its AM last said instead.
  if (EndedByCluster(w) && w.ended_note.empty()) return std::nullopt;
  if (w.state->state == "GONE") return ExitInfo{255, 0};
  return ExitInfo{w.state->exit_code, w.state->signal};
}

AttemptNote SlurmBackend::Note(const AttemptHandle& handle) {
  std::lock_guard lock(mutex_);
  auto it = watched_.find(handle.backend_id);
  if (it == watched_.end() || !it->second.state) return {};
  const SlurmJobState& state = *it->second.state;
  if (IsFinalSlurmState(state.state)) {
    AttemptNote note{it->second.ended_note, EndedByCluster(it->second) || state.state == "GONE", {}};
    note.preempted = EndedByCluster(it->second) && (state.preempted || state.state == "PREEMPTED");
    for (const std::string& node : it->second.failed_nodes) {
      auto address = node_addresses_.find(node);
      note.failed_hosts.push_back(address == node_addresses_.end() ? node : address->second);
    }
    return note;
  }
  return {DescribeWaiting(state), false};
}

bool SlurmBackend::AttemptAlive(const AttemptHandle& handle) const {
  auto states = Query({handle.backend_id});
  auto it = states.find(handle.backend_id);
  // Unknown (the controller is away) counts as alive: the job is not lost for that.
  return it == states.end() || !IsFinalSlurmState(it->second.state);
}

void SlurmBackend::KillAttempt(const AttemptLaunch& launch, const AttemptHandle& handle) {
  const std::string& id = handle.backend_id;
  auto ended = [&] {
    auto states = Query({id});
    return states.count(id) && IsFinalSlurmState(states[id].state);
  };
  MarkCancelledByShoal(id);
  // The AM first, if it runs: it stops its tasks within the grace period and reports KILLED.
  auto states = Query({id});
  if (!states.count(id) || states[id].state != "PENDING") {
    (void)commands_.Run({"scancel", "--batch", "--signal=USR2", id});  // the AM's "killed by the user"
    int64_t deadline = clock_.NowMillis() + options_.kill_grace_ms;
    while (!ended() && clock_.NowMillis() < deadline) SleepMillis(200);
  }
  // Then the whole job, and every step that is left.
  (void)commands_.Run({"scancel", id});
  int64_t deadline = clock_.NowMillis() + 30'000;
  while (!ended() && clock_.NowMillis() < deadline) SleepMillis(200);
  Refresh(true);
}

void SlurmBackend::CleanUpAttempt(const AttemptLaunch& launch) {
  std::string id;
  {
    std::lock_guard lock(mutex_);
    auto it = attempts_.find(AttemptKey(launch));
    if (it == attempts_.end()) return;
    id = it->second;
    auto w = watched_.find(id);
    if (w != watched_.end() && w->second.state && IsFinalSlurmState(w->second.state->state)) return;
  }
  MarkCancelledByShoal(id);
  (void)commands_.Run({"scancel", id});
}

bool SlurmBackend::EndedByCluster(const Watched& w) {
  if (!w.state || !IsFinalSlurmState(w.state->state)) return false;
  if (w.state->preempted && !w.cancelled_by_shoal) return true;  // ended in its grace, by its AM
  return IsClusterFailure(w.state->state) || (w.state->state == "CANCELLED" && !w.cancelled_by_shoal);
}

void SlurmBackend::MarkCancelledByShoal(const std::string& id) {
  std::lock_guard lock(mutex_);
  watched_[id].cancelled_by_shoal = true;
}

}  // namespace shoal
