#include "server/user_tokens.h"

#include <sys/stat.h>

#include <regex>

#include "common/files.h"
#include "common/log.h"
#include "common/secret.h"

namespace shoal {
namespace {

// The users of a parsed file; a malformed one is refused whole.
Result<Json> UsersOf(const Json& file, const std::string& path) {
  if (!file.is_object() || !file.contains("users") || !file["users"].is_object()) {
    return InvalidArgument(path + ": expected {\"users\": {NAME: {\"token\": ..., \"admin\": false}}}");
  }
  for (const auto& [name, user] : file["users"].items()) {
    bool token_ok = user.is_object() && user.contains("token") && user["token"].is_string() &&
                    user["token"].get<std::string>().size() >= 32;
    bool account_ok = !user.is_object() || !user.contains("unix_user") || user["unix_user"].is_string();
    if (!token_ok || !account_ok || (user.contains("admin") && !user["admin"].is_boolean()) || !CheckUserName(name).ok()) {
      return InvalidArgument(path + ": user '" + name + "' needs a \"token\" of at least 32 characters, a boolean "
                             "\"admin\" and, if any, a string \"unix_user\"");
    }
  }
  return file["users"];
}

}  // namespace

std::string UsersPath(const std::string& home) { return home + "/users.json"; }

Status CheckUserName(const std::string& name) {
  static const std::regex kName("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}");
  if (std::regex_match(name, kName)) return Status::Ok();
  return InvalidArgument("'" + name + "' is not a user name; use 1 to 64 letters, digits, '.', '_' and '-', "
                         "starting with a letter or digit");
}

Result<std::string> AddUser(const std::string& home, const std::string& name, bool admin, const std::string& unix_user) {
  RETURN_IF_ERROR(CheckUserName(name));
  Json file = {{"users", Json::object()}};
  if (auto text = ReadFile(UsersPath(home)); text.ok()) {
    ASSIGN_OR_RETURN(file, ParseJson(*text, UsersPath(home)));
    RETURN_IF_ERROR(UsersOf(file, UsersPath(home)).status());
  }
  ASSIGN_OR_RETURN(std::string token, RandomToken(32));
  file["users"][name] = {{"token", token}, {"admin", admin}};
  if (!unix_user.empty()) file["users"][name]["unix_user"] = unix_user;
  RETURN_IF_ERROR(WriteSecretFileAtomic(UsersPath(home), file.dump(2) + "\n"));
  return token;
}

std::optional<Caller> UserTokens::Find(const std::string& token) {
  std::lock_guard lock(mutex_);
  ReloadIfChanged();
  std::optional<Caller> found;
  // Every entry is compared, so the time taken says nothing about which one matched.
  for (const auto& [name, user] : users_.items()) {
    if (SecretEquals(token, user["token"].get<std::string>())) found = Caller{name, user.value("admin", false)};
  }
  return found;
}

std::optional<std::string> UserTokens::UnixUserOf(const std::string& name) {
  std::lock_guard lock(mutex_);
  ReloadIfChanged();
  if (!users_.contains(name) || !users_[name].contains("unix_user")) return std::nullopt;
  return users_[name]["unix_user"].get<std::string>();
}

void UserTokens::ReloadIfChanged() {
  struct stat st {};
  if (stat(path_.c_str(), &st) != 0) {
    users_ = Json::object();
    size_ = -1;
    return;
  }
  // Writers rename a new file into place, so a new inode means new contents even within
  // one tick of the file system's clock.
  if (st.st_ino == inode_ && st.st_size == size_ && st.st_mtim.tv_sec == mtime_.tv_sec &&
      st.st_mtim.tv_nsec == mtime_.tv_nsec) {
    return;
  }
  inode_ = st.st_ino;
  size_ = st.st_size;
  mtime_ = st.st_mtim;
  auto text = ReadFile(path_);
  auto file = text.ok() ? ParseJson(*text, path_) : Result<Json>(text.status());
  auto users = file.ok() ? UsersOf(*file, path_) : Result<Json>(file.status());
  if (!users.ok()) {
    LogError("keeping the users known so far: " + users.status().message());
    return;
  }
  users_ = *users;
}

}  // namespace shoal
