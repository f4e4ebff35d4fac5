// UserTokens: the server's users, each with a token of their own (<home>/users.json).
//
// Contract:
//  - The file is {"users": {"<name>": {"token": "<hex>", "admin": false,
//    "unix_user": "<account>"}, ...}}, mode 0600, in the server's home. AddUser() (what
//    `shoal user add` runs) gives a user a new random token, replacing an old one, and
//    writes the file atomically. `unix_user` (optional) links the user to the Unix account
//    a root server runs their jobs as (server/job_accounts.h); AddUser stores it as given,
//    its caller checks that the account exists.
//  - Find() looks a token up, re-reading the file when its inode, modification time or
//    size changed, so users added while the server runs are known at once. A file that cannot
//    be parsed keeps the last good table (and the error is logged once per change).
//  - User names: 1 to 64 of letters, digits, '.', '_', '-', starting with a letter or digit.
// Thread-safety: Find() is safe from any thread.
#pragma once

#include <sys/types.h>

#include <ctime>
#include <mutex>
#include <optional>
#include <string>

#include "common/json.h"
#include "common/status.h"
#include "server/server_auth.h"

namespace shoal {

std::string UsersPath(const std::string& home);
Status CheckUserName(const std::string& name);

// Gives `name` a new token in <home>/users.json and returns it.
Result<std::string> AddUser(const std::string& home, const std::string& name, bool admin,
                            const std::string& unix_user = "");

class UserTokens {
 public:
  explicit UserTokens(std::string path) : path_(std::move(path)) {}
  std::optional<Caller> Find(const std::string& token);
  // The Unix account `name` is linked to, if any.
  std::optional<std::string> UnixUserOf(const std::string& name);

 private:
  void ReloadIfChanged();  // REQUIRES mutex_
  const std::string path_;
  std::mutex mutex_;
  Json users_ = Json::object();  // GUARDED_BY(mutex_)
  timespec mtime_{};             // GUARDED_BY(mutex_)
  off_t size_ = -1;              // GUARDED_BY(mutex_)
  ino_t inode_ = 0;              // GUARDED_BY(mutex_)
};

}  // namespace shoal
