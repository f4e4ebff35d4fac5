// The REST API's views of jobs (docs/api.md): what the server keeps of each job and shows,
// and what `shoal status`, `shoal list` and `shoal run` read back. C++ types with one
// encoder and one decoder that the server and the CLI share; the job history stores the
// same encoding.
//
//   GET /api/v1/jobs        -> JobList     (each job a JobSummary)
//   GET /api/v1/jobs/J      -> JobDetail   (the summary's fields, and the spec, the
//                                           attempts with their tasks, the saved models)
//
// A detail's spec is the spec document (spec/spec_document.h): the job-spec schema a user
// writes, so `shoal status --json`'s spec can be submitted again. Decode also reads the
// internal form that job histories of earlier versions hold.
//
// Contract:
//  - Decode<T>(json) never throws, whatever the value: it returns the view or
//    InvalidArgument naming the field ("job.attempts[0].state must be one of ...").
//  - Encode(Decode(Encode(v))) == Encode(v). Optional texts of a saved model (uri,
//    message) and its updated_ms are written only when set, as the web UI expects.
// Thread-safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/status.h"
#include "protocol/attempt_messages.h"
#include "protocol/states.h"
#include "spec/job_spec.h"

namespace shoal::protocol {

// A Save Model request and what became of it (server/saved_models.h).
struct SavedModelView {
  std::string name;  // the request's UTC time, "YYYYMMDD-HHMMSS"
  int64_t requested_ms = 0;
  SaveState state = SaveState::kRequested;
  std::string uri;      // where the model went, once saved
  std::vector<std::string> targets;  // every output's folder it commits to, in spec order
  std::string message;  // why it failed
  int64_t updated_ms = 0;
  int attempt = 0;  // in a job's detail: the attempt that saved it (0: not written)
};

struct AttemptView {
  int number = 1;
  AttemptState state = AttemptState::kStarting;
  std::string message;
  int64_t started_ms = 0;
  int64_t finished_ms = 0;
  std::string backend_id;
  std::string am_addr;
  std::string dir;
  std::vector<std::vector<int>> task_gpus;
  std::vector<TaskView> tasks;  // as its AM last reported them
  bool final_reported = false;
  std::string board_url;  // the job's board (TensorBoard...), as the AM reports it
  std::vector<SavedModelView> saved_models;
};

struct JobSummary {
  std::string id;
  std::string name;
  std::string user;
  std::string framework;
  JobState state = JobState::kQueued;
  std::string message;
  double progress = 0;
  int attempt = 0;  // the latest attempt's number, 0 before the first
  int max_attempts = 1;
  int tasks = 0;
  int64_t created_ms = 0;
  int64_t started_ms = 0;
  int64_t finished_ms = 0;
  std::string queue = "default";
  int priority = 0;
  // While queued: why it has not started (the scheduling policy's words), and when it is
  // expected to (0: not known).
  std::string wait_reason;
  int64_t expected_start_ms = 0;
};

struct JobDetail {
  JobSummary summary;
  JobSpec spec;
  int64_t version = 0;  // bumped on every change; clients long-poll on it
  std::vector<AttemptView> attempts;
  std::string board_url;                     // the latest attempt's, "" when none
  std::vector<SavedModelView> saved_models;  // every attempt's, each with its attempt
  std::string limits_not_enforced;           // why the cluster does not hold tasks to their resources ("": it does)
};

struct JobList {
  std::vector<JobSummary> jobs;
  int64_t total = 0;  // how many match the filter, beyond this page too
  int limit = 0;      // the page asked for
  int64_t offset = 0;
};

Json Encode(const SavedModelView& v);
Json Encode(const AttemptView& v);
Json Encode(const JobSummary& v);
Json Encode(const JobDetail& v);
Json Encode(const JobList& v);

Result<SavedModelView> DecodeSavedModelView(const Json& json, const std::string& path);
Result<AttemptView> DecodeAttemptView(const Json& json, const std::string& path);

}  // namespace shoal::protocol
