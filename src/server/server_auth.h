// The server's token: who may use the API of a server that listens beyond loopback.
//
// Contract:
//  - A server on a loopback address (127.0.0.0/8, ::1, localhost) has no token: every
//    request is allowed, as before.
//  - Any other listen address: at start the server makes a random token (32 bytes from
//    /dev/urandom, hex), writes it to <home>/token with mode 0600 and requires
//    `Authorization: Bearer <token>` on every request to /api/ (except GET
//    /api/v1/health), /internal/ and /metrics. The page and its static files stay open:
//    they hold no data, and the page asks for the token when the API refuses it.
//  - Requires() says whether a request needs the token; Allows() compares in constant time.
// Thread-safety: an immutable value after construction.
#pragma once

#include <string>

#include "common/status.h"

namespace shoal {

bool IsLoopbackHost(const std::string& host);

class ServerAuth {
 public:
  // For `host`: no token on loopback (and any stale <home>/token is removed), else a new one.
  static Result<ServerAuth> ForHost(const std::string& host, const std::string& home);
  static ServerAuth WithToken(std::string token) { return ServerAuth(std::move(token)); }
  static ServerAuth Open() { return ServerAuth(""); }

  bool enabled() const { return !token_.empty(); }
  const std::string& token() const { return token_; }
  bool Requires(const std::string& method, const std::string& path) const;
  // `authorization` is the request's Authorization header ("" when absent).
  bool Allows(const std::string& authorization) const;

 private:
  explicit ServerAuth(std::string token) : token_(std::move(token)) {}
  std::string token_;
};

std::string TokenPath(const std::string& home);

}  // namespace shoal
