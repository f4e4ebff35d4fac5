#include "server/server_auth.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/secret.h"

namespace shoal {

bool IsLoopbackHost(const std::string& host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.starts_with("127.");
}

std::string TokenPath(const std::string& home) { return home + "/token"; }

namespace {

Status WriteSecret(const std::string& path, const std::string& text) {
  unlink(path.c_str());  // a file left by another user or mode must not be reused
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return Unavailable("cannot create the server's token file " + path);
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ok = fchmod(fd, 0600) == 0 && ok;
  close(fd);
  if (!ok) return Unavailable("cannot write the server's token file " + path);
  return Status::Ok();
}

}  // namespace

Result<ServerAuth> ServerAuth::ForHost(const std::string& host, const std::string& home) {
  if (IsLoopbackHost(host)) {
    unlink(TokenPath(home).c_str());
    return Open();
  }
  ASSIGN_OR_RETURN(std::string token, RandomToken(32));
  RETURN_IF_ERROR(WriteSecret(TokenPath(home), token + "\n"));
  return WithToken(token);
}

bool ServerAuth::Requires(const std::string& method, const std::string& path) const {
  if (!enabled()) return false;
  if (path == "/api/v1/health" && method == "GET") return false;
  return path.starts_with("/api/") || path.starts_with("/internal/") || path == "/metrics";
}

bool ServerAuth::Allows(const std::string& authorization) const {
  return !enabled() || SecretEquals(authorization, "Bearer " + token_);
}

}  // namespace shoal
