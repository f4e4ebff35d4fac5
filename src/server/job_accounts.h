// JobAccounts: the Unix account each job runs as (docs/isolation.md, "Identity").
//
// Contract:
//  - A server that does not run as root runs every job as itself: AccountFor answers ""
//    (the server's own account) whoever submitted; its users then share one Unix identity.
//  - A server running as root runs each job as its owner's account: the server owner's
//    own jobs (those its token submits) as `run_as` (`shoal server --run-as`; "": root
//    itself), another user's as the account `shoal user add --unix-user` linked to them.
//    A user with no linked account is refused with the command that links one; so is an
//    account that no longer exists.
//  - The job's account must also reach its working directory (read and enter it) and pass
//    through to the server's jobs folder; otherwise the job is refused, naming the folder
//    that stops it and the fix. A job refused here starts nothing (InvalidArgument: 400 at
//    the API, exit 2 in the CLI).
// Thread-safety: AccountFor is safe from any thread if `linked` is (ServerAuth's is).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "common/status.h"
#include "spec/job_spec.h"

namespace shoal {

class JobAccounts {
 public:
  struct Settings {
    bool server_is_root = false;
    std::string server_owner;  // the user the server's own token stands for
    std::string run_as;        // the account the owner's jobs run as ("": the server's own)
    std::string jobs_dir;      // where attempts' folders are made
    // The account a user is linked to (users.json's unix_user), if any.
    std::function<std::optional<std::string>(const std::string& user)> linked;
  };
  explicit JobAccounts(Settings settings) : settings_(std::move(settings)) {}

  // The account `spec` (submitted by spec.user) runs as; "" for the server's own.
  Result<std::string> AccountFor(const JobSpec& spec) const;

 private:
  Settings settings_;
};

}  // namespace shoal
