// UnixAccount: a Unix account a job runs as, and what that account can reach.
//
// Contract:
//  - LookUpAccount(name) reads the account from the system's user database (getpwnam_r,
//    so /etc/passwd, LDAP or whatever NSS names), with its primary group and every
//    supplementary group (getgrouplist). An account that does not exist is
//    InvalidArgument naming it and how to make one.
//  - CheckReachable(account, path) says whether `account` can reach `path`: every folder
//    from / down to it must grant it search (x) by the ordinary owner/group/other rules,
//    and the last must also grant it read and search (only search with `enter_only`: a
//    folder whose entries it need not list). Root reaches everything. The error
//    names the first folder that stops it, its owner and mode.
//  - HandOver(path, account) gives a folder Shoal made to the account: owner, group and
//    mode 0700, so no other account (root aside) can list or enter it.
//  - MakeAttemptFolders(attempt_dir, account) makes an attempt's folder and hands it and
//    its job's folder (the one above) to `account`, or, with none, makes both 0700 and
//    leaves them this process's.
// Thread-safety: functions of the system's state; safe from any thread.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/status.h"

namespace shoal {

struct UnixAccount {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary, the primary included
  std::string home;           // from the user database ("/" when it names none)

  bool is_root() const { return uid == 0; }
};

Result<UnixAccount> LookUpAccount(const std::string& name);
// The account this process runs as (its effective uid).
Result<UnixAccount> CurrentAccount();

Status CheckReachable(const UnixAccount& account, const std::string& path, bool enter_only = false);
Status HandOver(const std::string& path, const UnixAccount& account);
Status MakeAttemptFolders(const std::string& attempt_dir, const UnixAccount* account);

}  // namespace shoal
