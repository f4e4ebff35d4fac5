#include "server/job_accounts.h"

#include "isolation/unix_account.h"

namespace shoal {

Result<std::string> JobAccounts::AccountFor(const JobSpec& spec) const {
  if (!settings_.server_is_root) return std::string();
  std::optional<std::string> account =
      settings_.linked ? settings_.linked(spec.user) : std::optional<std::string>();
  if (!account && spec.user == settings_.server_owner) account = settings_.run_as;
  if (!account) {
    return InvalidArgument("user " + spec.user +
                           " has no Unix account to run as: this server runs as root and runs each job as its "
                           "owner's account; fix: link one with `shoal user add " + spec.user +
                           " --unix-user ACCOUNT` on the server's machine");
  }
  if (account->empty() || *account == "root") return std::string();
  Result<UnixAccount> found = LookUpAccount(*account);
  if (!found.ok()) return InvalidArgument("user " + spec.user + "'s jobs run as " + found.status().message());
  if (!spec.workdir.empty()) {
    if (Status reach = CheckReachable(*found, spec.workdir); !reach.ok()) {
      return InvalidArgument("workdir: the job runs as Unix account " + *account + ", which cannot reach " +
                             spec.workdir + ": " + reach.message() + "; fix: submit from (or set workdir to) a " +
                             "folder " + *account + " may enter");
    }
  }
  if (Status reach = CheckReachable(*found, settings_.jobs_dir, /*enter_only=*/true); !reach.ok()) {
    return InvalidArgument("the server's jobs folder " + settings_.jobs_dir + " is out of reach of Unix account " +
                           *account + " (" + reach.message() + "); fix: start the server with `--jobs-dir` on a " +
                           "folder every account may pass through, such as /var/lib/shoal/jobs");
  }
  return *account;
}

}  // namespace shoal
