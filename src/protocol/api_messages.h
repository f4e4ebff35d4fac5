// The REST API's request bodies that the CLI and the server share (docs/api.md), as
// C++ types with one encoder and one decoder.
//
//   POST /api/v1/jobs   SubmitRequest -> {id}
//
// Contract: Decode<T> never throws; a field of the wrong type is InvalidArgument naming it
// ("submit.overrides must be a list of strings"), a 400.
// Thread-safety: value types and pure functions.
#pragma once

#include <string>
#include <vector>

#include "common/json.h"
#include "common/status.h"
#include "protocol/task_messages.h"

namespace shoal::protocol {

struct SubmitRequest {
  std::string spec;                    // YAML or JSON text; an object in the body is taken as its JSON text
  std::vector<std::string> overrides;  // "path=value", as --set gives them
  std::string source_name = "job spec";  // names the spec in errors ("job.yaml:3: ...")
  std::string base_dir = "/";          // relative paths in the spec start here
  std::string default_name = "job";    // the job's name when the spec has none
  std::string user;                    // on whose behalf (administrators only)
};

Json Encode(const SubmitRequest& m);

}  // namespace shoal::protocol
