#include "server/job_access.h"

namespace shoal {

Status CheckJobAccess(const std::optional<Caller>& caller, JobAction action, const std::string& job_id,
                      const std::string& owner) {
  if (!caller) {
    if (action == JobAction::kRead) return Status::Ok();
    return PermissionDenied("changing " + job_id + " needs a token: the server's, or " + owner + "'s own");
  }
  if (caller->admin || caller->user == owner) return Status::Ok();
  return PermissionDenied(job_id + " belongs to " + owner + ": only " + owner + " or an administrator may " +
                          (action == JobAction::kRead ? "read" : "change") + " it (you are " + caller->user + ")");
}

std::string SubmitterName(const std::optional<Caller>& caller, const std::string& requested) {
  if (!caller) return requested.empty() ? "unknown" : requested;
  if (caller->admin && !requested.empty()) return requested;
  return caller->user;
}

}  // namespace shoal
