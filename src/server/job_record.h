// JobRecord: everything the server knows about one job, as kept in memory and stored in
// the job history. Attempts keep the last task views their AM reported (typed: JSON is
// only the form they take in the job history and in the API's detail).
// Thread-safety: a value type; the JobManager guards the live ones.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/json.h"
#include "protocol/attempt_messages.h"
#include "protocol/states.h"
#include "spec/job_spec.h"

namespace shoal {

struct AttemptRecord {
  int number = 1;
  AttemptState state = AttemptState::kStarting;
  std::string message;
  int64_t started_ms = 0;
  int64_t finished_ms = 0;
  std::string backend_id;
  std::string am_addr;
  std::string dir;
  std::vector<std::vector<int>> task_gpus;
  std::vector<protocol::TaskView> tasks;  // as its AM last reported them
  bool final_reported = false;
  std::string board_url;                 // the job's board (TensorBoard...), as the AM reports it
  Json saved_models = Json::array();     // server/saved_models.h
};

struct JobRecord {
  int64_t seq = 0;   // the history's row id; the job id is "job-<seq>"
  std::string id;
  JobSpec spec;
  JobState state = JobState::kQueued;
  std::string message;
  int64_t created_ms = 0;
  int64_t started_ms = 0;
  int64_t finished_ms = 0;
  double progress = 0;
  bool kill_requested = false;
  std::vector<AttemptRecord> attempts;
  int64_t version = 1;  // bumped on every change; clients long-poll on it

  // The short form shown in lists.
  Json Summary() const;
  // Everything, for `shoal status` and the job page; also "board_url" (the latest
  // attempt's, "" when none) and "saved_models" (every attempt's, each with "attempt").
  Json Detail() const;
};

std::string JobIdFor(int64_t seq);
// Accepts "job-12" and "12"; 0 when the text is neither.
int64_t JobSeqFromId(const std::string& id);

Json ToJson(const AttemptRecord& attempt);
AttemptRecord AttemptFromJson(const Json& json);

}  // namespace shoal
