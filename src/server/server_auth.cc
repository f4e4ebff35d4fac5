#include "server/server_auth.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <sys/stat.h>
#include <unistd.h>

#include "common/files.h"
#include "common/secret.h"
#include "common/token_file.h"
#include "server/user_tokens.h"

namespace shoal {

bool IsLoopbackHost(const std::string& host) {
  if (host == "localhost") return true;
  std::string address = host.size() > 2 && host.front() == '[' && host.back() == ']' ? host.substr(1, host.size() - 2) : host;
  in_addr v4{};
  if (inet_pton(AF_INET, address.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  return inet_pton(AF_INET6, address.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

std::string HostOfHeader(const std::string& host_header) {
  if (host_header.starts_with("[")) {
    size_t close = host_header.find(']');
    return close == std::string::npos ? host_header : host_header.substr(0, close + 1);
  }
  size_t colon = host_header.find(':');
  return colon == std::string::npos ? host_header : host_header.substr(0, colon);
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

bool ServerAuth::AcceptsHost(const std::string& host_header) const {
  return !loopback_ || host_header.empty() || IsLoopbackHost(HostOfHeader(host_header));
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

std::optional<std::string> ServerAuth::UnixUserOf(const std::string& user) const {
  return users_ ? users_->UnixUserOf(user) : std::nullopt;
}

std::string ServerAuth::AttemptToken(const std::string& job_id, int attempt) const {
  return HmacSha256Hex(token_, "attempt " + job_id + "/" + std::to_string(attempt));
}

std::optional<Caller> ServerAuth::Identify(const std::string& authorization, const std::string& path) const {
  if (auto caller = Identify(authorization)) return caller;
  static constexpr std::string_view kPrefix = "/internal/v1/jobs/";
  static constexpr std::string_view kBearer = "Bearer ";
  if (!path.starts_with(kPrefix) || !authorization.starts_with(kBearer)) return std::nullopt;
  // /internal/v1/jobs/<job>/attempts/<n>[/...]
  std::string rest = path.substr(kPrefix.size());
  size_t slash = rest.find('/');
  if (slash == std::string::npos || rest.compare(slash, 10, "/attempts/") != 0) return std::nullopt;
  std::string job = rest.substr(0, slash);
  std::string number = rest.substr(slash + 10);
  number = number.substr(0, number.find('/'));
  if (job.empty() || number.empty() || number.size() > 6 || number.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  int attempt = std::stoi(number);
  if (!SecretEquals(authorization.substr(kBearer.size()), AttemptToken(job, attempt))) return std::nullopt;
  return Caller{"", false, std::make_pair(job, attempt)};
}

}  // namespace shoal
