#include "server/stack_capture.h"

#include "common/http_client.h"
#include "master/am_protocol.h"

namespace shoal {

Result<Json> CaptureStacks(JobManager& jobs, const std::string& id, const std::string& server_token) {
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
  am.set_bearer_token(server_token);
  auto reply = am.Post(am_protocol::kStackRequest, Json::object());
  if (!reply.ok()) {
    if (reply.status().code() == StatusCode::kFailedPrecondition) return reply.status();
    return Unavailable("the application master of " + id + " (" + am_addr + ") did not give the stacks: " +
                       reply.status().message());
  }
  return Json{{"job", id}, {"attempt", attempt.value("number", 0)}, {"tasks", (*reply)["tasks"]}};
}

}  // namespace shoal
