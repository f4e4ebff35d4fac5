// The agent-to-AM protocol: every message between a task's container agent
// (`shoal container`) and its attempt's application master, as C++ types with one
// encoder and one decoder that both sides use. Every message is a JSON object over HTTP;
// each request carries the task's token (master/task_tokens.h) as a bearer token.
//
//   POST /am/v1/register   RegisterRequest                           -> {}
//   GET  /am/v1/cluster?role=R&index=I&wait_ms=N (WaitQuery)         -> ClusterReply
//        (ready: false when not every task has registered within wait_ms)
//   POST /am/v1/started    StartedRequest                            -> {}
//   POST /am/v1/heartbeat  HeartbeatRequest                          -> HeartbeatReply
//   POST /am/v1/stacks     StacksAnswer (after a reply's dump_stacks) -> {}
//   POST /am/v1/exited     ExitRequest                               -> {}
//   GET  /am/v1/mpi/command?role=R&index=I&wait_ms=N (WaitQuery)     -> MpiCommandReply
// and between `shoal mpi-agent` (mpirun's launcher, with the attempt's MPI token) and the AM:
//   POST /am/v1/mpi/launch  MpiLaunchRequest                         -> {}
//   GET  /am/v1/mpi/wait?host=H&wait_ms=N                            -> MpiWaitReply
// An error reply 410 (Aborted) or 404 tells the agent that the attempt is over: it stops.
// The AM's own routes for the server and for mpirun are in protocol/attempt_messages.h
// and master/mpi_launch.h.
//
// Contract:
//  - Decode<T>(json) never throws, whatever the value: it returns the message or
//    InvalidArgument naming the field ("heartbeat.sample.rss must be ..."). Absent
//    optional fields take the defaults written here. Encode(Decode(Encode(m))) ==
//    Encode(m) for every message (fuzz/protocol_fuzzer.cc checks both).
//  - A LaunchPlan is what the AM computes for one task (runtime/launch_plan.h); the agent
//    applies it and adds only what it alone knows (its task directory, local files).
// Thread-safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/process.h"
#include "common/status.h"
#include "protocol/series.h"
#include "protocol/states.h"
#include "spec/job_spec.h"

namespace shoal::protocol {

inline constexpr const char* kRegisterPath = "/am/v1/register";
inline constexpr const char* kClusterPath = "/am/v1/cluster";
inline constexpr const char* kStartedPath = "/am/v1/started";
inline constexpr const char* kHeartbeatPath = "/am/v1/heartbeat";
inline constexpr const char* kExitedPath = "/am/v1/exited";
inline constexpr const char* kStacksPath = "/am/v1/stacks";
inline constexpr const char* kMpiCommandPath = "/am/v1/mpi/command";
inline constexpr const char* kMpiLaunchPath = "/am/v1/mpi/launch";
inline constexpr const char* kMpiWaitPath = "/am/v1/mpi/wait";

// The variables that carry the task's and the MPI launcher's tokens (master/task_tokens.h).
inline constexpr const char* kTaskTokenVariable = "SHOAL_TASK_TOKEN";
inline constexpr const char* kMpiTokenVariable = "SHOAL_MPI_TOKEN";

using EnvMap = std::map<std::string, std::string>;

// Which task a message speaks for.
struct TaskId {
  std::string role;
  int index = 0;
  std::string Name() const { return role + "[" + std::to_string(index) + "]"; }
  bool operator==(const TaskId&) const = default;
};

// A Save Model request's progress, as an agent reports it to the AM and the AM to the
// server (docs/data.md).
struct SavedModelUpdate {
  std::string name;
  SaveState state = SaveState::kRequested;
  std::string uri;
  std::string message;
  bool operator==(const SavedModelUpdate&) const = default;
};

struct RegisterRequest {
  TaskId task;
  std::string host = "127.0.0.1";
  std::vector<int> ports;                // at least one; the first is the task's own port
  std::optional<std::vector<int>> gpus;  // a cluster's own GPU assignment (Slurm's), when it made one
  int pid = 0;
};

// The query of a long poll on the AM (cluster, mpi command).
struct WaitQuery {
  TaskId task;
  int wait_ms = 5000;  // 0..30000
};

// Everything a task's agent needs to start the program (runtime/launch_plan.h).
struct LaunchPlan {
  std::string command;                 // run with /bin/sh -c
  std::string workdir;
  EnvMap env;                          // the program's whole environment but what only the agent knows
  std::vector<EnvMap> processes{{}};   // per local process (nproc_per_node): variables added to env
  int heartbeat_ms = 1000;
  std::optional<std::string> board_command;
  bool mpi = false;                    // the program is the orted mpirun asks for (kMpiCommandPath)
  std::vector<std::string> files;      // copied into the task directory
  std::vector<ArchiveSpec> archives;   // unpacked into it
  Json inputs = Json::array();         // the task's shares (data/data_plan.h's form, read by data::TaskData)
  Json outputs = Json::array();
  std::vector<std::string> mask;       // secret values masked in the task's log
  // The task's checkpoints (data/checkpoints.h), if any, and the round it resumes from (0: none).
  std::optional<CheckpointSpec> checkpoint;
  int resume_round = 0;
  int64_t preemption_grace_ms = 30'000;  // the job's: what a program preempted by the cluster gets
  // The image the task's programs run in (isolation/oci_bundle.h), resolved by the server.
  std::optional<ImageSpec> image;
};

struct ClusterReply {
  bool ready = false;  // false: not every task has registered yet; ask again
  LaunchPlan plan;     // meaningful when ready
};

struct StartedRequest {
  TaskId task;
  int pid = 0;
  std::string board_url;
};

struct HeartbeatRequest {
  TaskId task;
  double progress = -1;                  // < 0: unchanged
  std::optional<ResourceSample> sample;  // about once a heartbeat interval
  std::vector<MetricPoint> metrics;      // points not yet acknowledged
  double rtt_ms = -1;                    // the previous heartbeat's round trip; < 0: none yet
  bool uploading = false;                // the agent is committing the outputs (activity)
  std::vector<SavedModelUpdate> saved_models;
};

// A preemption: the program is told (SIGTERM, and the preemption file) and has grace_ms to
// write its checkpoint before it is killed (docs/scheduling.md).
// After a preemption's grace, how long an agent has to upload the program's last
// checkpoint (and on_failure outputs) before its container is stopped.
inline constexpr int64_t kPreemptUploadAllowanceMs = 120'000;

struct PreemptNotice {
  std::string reason;
  int64_t grace_ms = 0;
  bool operator==(const PreemptNotice&) const = default;
};

struct HeartbeatReply {
  bool keep_running = true;
  std::optional<int64_t> dump_stacks;     // `shoal stack`: answer with a StacksAnswer of this id
  std::vector<std::string> save_models;   // Save Model requests to start
  std::optional<PreemptNotice> preempt;   // with keep_running false: stop as preempted
};

struct StacksAnswer {
  TaskId task;
  int64_t id = 0;
  std::string text;
};

struct ExitRequest {
  TaskId task;
  ExitInfo exit{255, 0};
  std::string message;
  // The agent was sent SIGTERM before its program ended: by the AM's launcher when the AM
  // stopped the task, otherwise from outside Shoal (Slurm's preemption, a scancel).
  bool terminated = false;
};

struct MpiCommandReply {
  bool ready = false;
  std::string command;  // the orted command line, when ready
};

struct MpiLaunchRequest {
  std::string host;     // the host name mpirun gave this rank's daemon (master/mpi_launch.h)
  std::string command;  // the orted command line to run there
};

struct MpiWaitReply {
  bool done = false;
  int exit_code = 1;
};

Json Encode(const TaskId& m);
Json Encode(const MpiLaunchRequest& m);
Json Encode(const MpiWaitReply& m);
Json Encode(const SavedModelUpdate& m);
Json Encode(const RegisterRequest& m);
Json Encode(const LaunchPlan& m);
Json Encode(const ClusterReply& m);
Json Encode(const StartedRequest& m);
Json Encode(const HeartbeatRequest& m);
Json Encode(const PreemptNotice& m);
// The optional notice in r's field "preempt" (absent or null: none); a malformed one is
// recorded in r.
class FieldReader;
std::optional<PreemptNotice> ReadPreemptNotice(FieldReader& r);
Json Encode(const HeartbeatReply& m);
Json Encode(const StacksAnswer& m);
Json Encode(const ExitRequest& m);
Json Encode(const MpiCommandReply& m);

// Decode<RegisterRequest>(json) and so on, for every message above.
template <typename T>
Result<T> Decode(const Json& json);

// The query string of a WaitQuery ("?role=...&index=...&wait_ms=..."), and its reading
// from the request's parameters (absent ones are "").
std::string EncodeQuery(const WaitQuery& q);
Result<WaitQuery> DecodeWaitQuery(const std::string& role, const std::string& index, const std::string& wait_ms);

// Decoders for parts, shared with the AM-to-server messages.
Result<TaskId> DecodeTaskId(const Json& json, const std::string& path);
Result<SavedModelUpdate> DecodeSavedModelUpdate(const Json& json, const std::string& path);

}  // namespace shoal::protocol
