#include "server/server_auth.h"

#include <sys/stat.h>
#include <unistd.h>

#include "common/files.h"
#include "common/secret.h"
#include "common/token_file.h"
#include "server/user_tokens.h"

namespace shoal {

bool IsLoopbackHost(const std::string& host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.starts_with("127.");
}

std::string TokenPath(const std::string& home) { return home + "/token"; }

namespace {

// The token in <home>/token when it is ours and only ours to read; else a new one.
Result<std::string> KeptOrNewToken(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && st.st_uid == geteuid() && (st.st_mode & 0077) == 0) {
    if (std::string token = ReadTokenFile(path); token.size() >= 32) return token;
  }
  ASSIGN_OR_RETURN(std::string token, RandomToken(32));
  Status written = WriteSecretFileAtomic(path, token + "\n");
  if (!written.ok()) return Unavailable("cannot write the server's token file: " + written.message());
  return token;
}

}  // namespace

ServerAuth::ServerAuth(std::string token, bool loopback, std::string owner, std::shared_ptr<UserTokens> users)
    : token_(std::move(token)), loopback_(loopback), owner_(std::move(owner)), users_(std::move(users)) {}

Result<ServerAuth> ServerAuth::ForServer(const std::string& host, const std::string& home, const std::string& owner) {
  ASSIGN_OR_RETURN(std::string token, KeptOrNewToken(TokenPath(home)));
  return ServerAuth(std::move(token), IsLoopbackHost(host), owner, std::make_shared<UserTokens>(UsersPath(home)));
}

ServerAuth ServerAuth::WithToken(std::string token, bool loopback, std::string owner) {
  return ServerAuth(std::move(token), loopback, std::move(owner), nullptr);
}

bool ServerAuth::Requires(const std::string& method, const std::string& path) const {
  if (path == "/api/v1/health" && method == "GET") return false;
  bool api = path.starts_with("/api/") || path.starts_with("/internal/");
  bool read = method == "GET" || method == "HEAD";
  if (api && !read) return true;
  return !loopback_ && (api || path == "/metrics");
}

std::optional<Caller> ServerAuth::Identify(const std::string& authorization) const {
  static constexpr std::string_view kBearer = "Bearer ";
  if (!authorization.starts_with(kBearer)) return std::nullopt;
  std::string token = authorization.substr(kBearer.size());
  if (SecretEquals(token, token_)) return Caller{owner_, true};
  if (users_) return users_->Find(token);
  return std::nullopt;
}

}  // namespace shoal
