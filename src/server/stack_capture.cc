#include "server/stack_capture.h"

#include "common/http_client.h"
#include "protocol/attempt_messages.h"

namespace shoal {

Result<Json> CaptureStacks(JobManager& jobs, const std::string& id, const ServerAuth& auth) {
  ASSIGN_OR_RETURN(Json detail, jobs.Get(id, 0, 0));
  std::string state = detail.value("state", "");
  const Json& attempts = detail["attempts"];
  if (state != "RUNNING" || !attempts.is_array() || attempts.empty()) {
    return FailedPrecondition("job " + id + " is " + state + ": only a running job has stacks to take");
  }
  const Json& attempt = attempts.back();
  std::string am_addr = attempt.value("am_addr", "");
  if (am_addr.empty()) return FailedPrecondition("job " + id + "'s application master has not started yet; try again in a moment");
  HttpJsonClient am("http://" + am_addr, 60'000);
  am.set_bearer_token(auth.AttemptToken(detail.value("id", id), attempt.value("number", 0)));
  auto reply = am.Post(protocol::kStackRequestPath, Json::object());
  if (!reply.ok()) {
    if (reply.status().code() == StatusCode::kFailedPrecondition) return reply.status();
    return Unavailable("the application master of " + id + " (" + am_addr + ") did not give the stacks: " +
                       reply.status().message());
  }
  ASSIGN_OR_RETURN(protocol::StackReply stacks, protocol::Decode<protocol::StackReply>(*reply));
  Json tasks = protocol::Encode(stacks)["tasks"];
  return Json{{"job", id}, {"attempt", attempt.value("number", 0)}, {"tasks", tasks}};
}

}  // namespace shoal
