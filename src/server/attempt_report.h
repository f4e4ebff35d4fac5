// AttemptReport: an AM's report on its attempt (POST /internal/v1/jobs/ID/attempts/N/report),
// parsed and checked whole before the JobManager applies any of it.
//
// Contract:
//  - Required: "tasks" (an array of task objects). Optional: "state", "message",
//    "am_addr" (strings), "final" (bool), "series" (server/series.h), "board_url"
//    (an http:// or https:// URL; null or "" clears it), "saved_models" (updates of
//    save requests: [{name, state: requested|uploading|saved|failed, uri?, message?}]).
//  - Each task's "heartbeat_rtt_ms" (a number; negative means no round trip yet) is
//    collected for /metrics when >= 0.
//  - Any malformed field is InvalidArgument naming it; a report is applied all or nothing.
// Thread-safety: value types and a pure function.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "server/series.h"

namespace shoal {

struct SavedModelUpdate {
  std::string name;
  std::string state;
  std::string uri;
  std::string message;
};

struct AttemptReport {
  Json tasks = Json::array();
  std::optional<std::string> state;
  std::optional<std::string> message;
  std::optional<std::string> am_addr;
  bool final = false;
  std::vector<TaskSeries> series;
  std::optional<std::string> board_url;  // set when the report carries the field
  std::vector<SavedModelUpdate> saved_models;
  std::vector<double> heartbeat_rtts_ms;
};

Result<AttemptReport> ParseAttemptReport(const Json& report);

}  // namespace shoal
