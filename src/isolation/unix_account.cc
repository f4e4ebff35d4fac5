#include "isolation/unix_account.h"

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/files.h"

namespace shoal {
namespace {

Result<UnixAccount> FromPasswd(const passwd& entry) {
  UnixAccount account;
  account.name = entry.pw_name;
  account.uid = entry.pw_uid;
  account.gid = entry.pw_gid;
  account.home = entry.pw_dir && *entry.pw_dir ? entry.pw_dir : "/";
  int count = 32;
  for (int tries = 0; tries < 4; ++tries) {
    account.groups.assign(count, 0);
    int found = count;
    if (getgrouplist(entry.pw_name, entry.pw_gid, account.groups.data(), &found) >= 0) {
      account.groups.resize(found);
      return account;
    }
    count = std::max(found, count * 2);
  }
  return Internal("cannot list the groups of Unix account " + account.name);
}

// The permission bits of `st` that apply to `account`: owner's, group's or others'.
mode_t BitsFor(const UnixAccount& account, const struct stat& st) {
  if (st.st_uid == account.uid) return (st.st_mode >> 6) & 7;
  if (std::find(account.groups.begin(), account.groups.end(), st.st_gid) != account.groups.end()) {
    return (st.st_mode >> 3) & 7;
  }
  return st.st_mode & 7;
}

std::string ModeText(const struct stat& st) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  return text;
}

}  // namespace

Result<UnixAccount> LookUpAccount(const std::string& name) {
  if (name.empty()) return InvalidArgument("no Unix account named");
  passwd entry{};
  passwd* found = nullptr;
  std::vector<char> buffer(16384);
  int error = getpwnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found);
  if (error != 0 && error != ENOENT && error != ESRCH) {
    return Unavailable("cannot look up Unix account " + name + ": " + std::strerror(error));
  }
  if (!found) {
    return InvalidArgument("there is no Unix account named '" + name + "' on this machine; fix: create it (`useradd " +
                           name + "`) or name an account that exists (`getent passwd` lists them)");
  }
  return FromPasswd(entry);
}

Result<UnixAccount> CurrentAccount() {
  passwd entry{};
  passwd* found = nullptr;
  std::vector<char> buffer(16384);
  if (getpwuid_r(geteuid(), &entry, buffer.data(), buffer.size(), &found) != 0 || !found) {
    UnixAccount nameless;
    nameless.name = std::to_string(geteuid());
    nameless.uid = geteuid();
    nameless.gid = getegid();
    nameless.groups = {getegid()};
    nameless.home = "/";
    return nameless;
  }
  return FromPasswd(entry);
}

Status CheckReachable(const UnixAccount& account, const std::string& path, bool enter_only) {
  if (account.is_root()) return Status::Ok();
  if (path.empty() || path[0] != '/') return InvalidArgument("'" + path + "' is not an absolute path");
  std::string prefix;
  size_t start = 1;
  while (true) {
    size_t slash = path.find('/', start);
    prefix = slash == std::string::npos ? path : path.substr(0, slash);
    if (prefix.empty()) prefix = "/";
    struct stat st {};
    if (stat(prefix.c_str(), &st) != 0) {
      return InvalidArgument("cannot reach " + prefix + ": " + std::strerror(errno));
    }
    bool last = slash == std::string::npos || slash + 1 >= path.size();
    mode_t needed = last && !enter_only ? 5 : 1;  // read and search the folder itself; search every one above it
    if ((BitsFor(account, st) & needed) != needed) {
      return PermissionDenied("Unix account " + account.name + " cannot " + (last ? "open " : "pass through ") + prefix +
                              " (owner uid " + std::to_string(st.st_uid) + ", mode " + ModeText(st) + ")");
    }
    if (last) return Status::Ok();
    start = slash + 1;
  }
}

Status HandOver(const std::string& path, const UnixAccount& account) {
  if (chown(path.c_str(), account.uid, account.gid) != 0 || chmod(path.c_str(), 0700) != 0) {
    return Internal("cannot give " + path + " to Unix account " + account.name + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace shoal

namespace shoal {

Status MakeAttemptFolders(const std::string& attempt_dir, const UnixAccount* account) {
  RETURN_IF_ERROR(MakeDirectories(attempt_dir));
  for (const std::string& folder : {DirName(attempt_dir), attempt_dir}) {
    if (account) {
      RETURN_IF_ERROR(HandOver(folder, *account));
    } else if (chmod(folder.c_str(), 0700) != 0) {
      return Internal("cannot make " + folder + " private: " + std::strerror(errno));
    }
  }
  return Status::Ok();
}

}  // namespace shoal
