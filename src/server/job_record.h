// JobRecord: everything the server knows about one job, as kept in memory and stored in
// the job history. Attempts are the protocol's AttemptView (protocol/job_views.h) with the
// last task views their AM reported; JSON is only the form they take in the job history
// and in the API, through the protocol's encoders.
// Thread-safety: a value type; the JobManager guards the live ones.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/status.h"
#include "protocol/job_views.h"
#include "protocol/states.h"
#include "spec/job_spec.h"

namespace shoal {

using AttemptRecord = protocol::AttemptView;

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
  std::string preempt_reason;    // while the scheduler stops its attempt for another job ("" otherwise)
  // A preemption told to the AM (its programs have their grace): when the grace ends, and
  // when the server kills what is left of the attempt (monotonic; 0: not told, or killed).
  int64_t preempt_grace_ends_ms = 0;
  int64_t preempt_kill_at_ms = 0;
  std::string wait_reason;       // while queued: the scheduler's latest reason
  int64_t expected_start_ms = 0;  // while queued: its reservation, 0 when none is known
  std::vector<AttemptRecord> attempts;
  int64_t version = 1;  // bumped on every change; clients long-poll on it

  // The short form shown in lists.
  protocol::JobSummary Summary() const;
  // Everything, for `shoal status` and the job page; the board is the latest attempt's,
  // the saved models every attempt's.
  protocol::JobDetail Detail() const;
  // The record a detail describes (the job history's rows).
  static JobRecord FromDetail(int64_t seq, protocol::JobDetail detail);
};

std::string JobIdFor(int64_t seq);
// Accepts "job-12" and "12"; 0 when the text is neither.
int64_t JobSeqFromId(const std::string& id);

}  // namespace shoal
