// The AM-to-server protocol, and the server's calls on an AM: C++ types with one encoder
// and one decoder that both sides use. Every call carries the attempt's token (minted by
// the server for that attempt alone, server/attempt_tokens.h) as a bearer token.
//
//   GET  /internal/v1/jobs/J/attempts/N          -> AttemptFetchReply   (AM -> server)
//   POST /internal/v1/jobs/J/attempts/N/report   AttemptReport -> ReportReply
//   POST /am/v1/stack   {}                       -> StackReply          (server -> AM, waits <= 45 s)
//
// Contract:
//  - Decode<T>(json) never throws, whatever the value: it returns the message or
//    InvalidArgument naming the field ("report.tasks[3].state must be one of ...").
//  - A TaskView is a task as the AM last saw it; the server keeps them typed and shows
//    them in the job's detail (docs/api.md) in exactly this encoding.
//  - A report is applied all or nothing; its optional fields, when absent, leave what the
//    server knows unchanged.
// Thread-safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/status.h"
#include "protocol/series.h"
#include "protocol/states.h"
#include "protocol/task_messages.h"
#include "spec/job_spec.h"

namespace shoal::protocol {

inline constexpr const char* kStackRequestPath = "/am/v1/stack";
// The AM's environment variable holding its attempt's token (set by the backend that
// starts the AM; the AM removes it from its own environment at once).
inline constexpr const char* kAttemptTokenVariable = "SHOAL_ATTEMPT_TOKEN";
std::string AttemptPath(const std::string& job_id, int attempt);
std::string ReportPath(const std::string& job_id, int attempt);

// One task of an attempt, as the AM reports it and the server shows it.
struct TaskView {
  std::string role;
  int index = 0;
  int rank = 0;
  TaskState state = TaskState::kPending;
  std::string container_id;
  std::string host;
  std::vector<int> ports;
  std::vector<int> gpus;
  int pid = 0;
  double progress = 0;
  int exit_code = -1;
  int signal = 0;
  std::string message;
  int64_t started_ms = 0;
  int64_t finished_ms = 0;
  bool service = false;
  double cpu = 0;                 // percent of one core, latest sample
  int64_t rss = 0;                // bytes, latest sample
  int64_t rss_peak = 0;           // bytes, the most it held: its cgroup's peak, else the highest sample
  double heartbeat_rtt_ms = -1;   // < 0: no round trip yet
  bool hung = false;
  int64_t hung_since_ms = 0;
  std::string Name() const { return role + "[" + std::to_string(index) + "]"; }
};

struct AttemptFetchReply {
  JobSpec spec;
  std::vector<std::vector<int>> task_gpus;  // by rank, what the server's admission assigned
};

struct AttemptReport {
  std::vector<TaskView> tasks;
  std::optional<AttemptState> state;
  std::optional<std::string> message;
  std::optional<std::string> am_addr;
  bool final = false;                    // the AM's last report: the attempt is over
  int64_t version = 0;                   // the AM's own change counter
  std::vector<TaskSeries> series;
  std::optional<std::string> board_url;  // present: set it ("" clears it)
  std::vector<SavedModelUpdate> saved_models;
};

struct SaveRequest {
  std::string name;
  int64_t requested_ms = 0;
};

struct ReportReply {
  std::vector<SaveRequest> save_requests;  // still pending: the AM must start them
  // false: the report's state was applied but its series could not be stored (the
  // history's disk is full): the AM keeps them for a later report.
  bool series_stored = true;
  // The server preempts the attempt: the AM stops every task as preempted.
  std::optional<PreemptNotice> preempt;
};

struct StackEntry {
  std::string task;  // "worker[0]"
  std::string host;
  bool answered = false;
  std::string text;
};

struct StackReply {
  std::vector<StackEntry> tasks;
};

Json Encode(const TaskView& m);
Json Encode(const AttemptFetchReply& m);
Json Encode(const AttemptReport& m);
Json Encode(const SaveRequest& m);
Json Encode(const ReportReply& m);
Json Encode(const StackEntry& m);
Json Encode(const StackReply& m);

Result<TaskView> DecodeTaskView(const Json& json, const std::string& path);

// Shared by the decoders of messages that carry a job spec and the tasks' GPUs
// (AttemptFetchReply, JobDetail, AttemptView): the "spec" object (an error when absent),
// the spec it describes, and "task_gpus" (a list of GPU index lists).
class FieldReader;
const Json* RequireSpec(FieldReader& r);
Result<JobSpec> DecodeSpec(const Json& spec, const std::string& path);
std::vector<std::vector<int>> ReadTaskGpus(FieldReader& r);

}  // namespace shoal::protocol
