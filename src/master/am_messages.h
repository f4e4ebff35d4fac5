// The AM's reading of container messages (am_protocol.h): each decoder turns a message
// body into plain values or refuses it with a sentence; none throws, whatever the body
// (fuzz/am_message_fuzzer.cc feeds them arbitrary JSON).
//
// Contract:
//  - TaskFromBody needs "role" (text) and "index" (integer).
//  - Optional fields take their defaults when absent; present with the wrong type, the
//    message is refused (kInvalidArgument naming the field).
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/process.h"
#include "common/status.h"
#include "master/attempt_tracker.h"

namespace shoal {

struct TaskRef {
  std::string role;
  int index = 0;
};

struct RegisterMessage {
  std::string host = "127.0.0.1";
  std::vector<int> ports;
  std::optional<std::vector<int>> gpus;  // a cluster's own GPU assignment (Slurm's), when the agent reports one
};

struct StartedMessage {
  int pid = 0;
  std::string board_url;
};

struct ExitMessage {
  ExitInfo exit{255, 0};
  std::string message;
};

Result<TaskRef> TaskFromBody(const Json& body);
Result<RegisterMessage> RegisterFromBody(const Json& body);
Result<StartedMessage> StartedFromBody(const Json& body);
Result<HeartbeatData> HeartbeatFromBody(const Json& body);
Result<ExitMessage> ExitFromBody(const Json& body);

}  // namespace shoal
