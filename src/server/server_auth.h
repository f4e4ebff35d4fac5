// Who is calling the server, and what a call needs: the server's token, users' tokens.
//
// Contract:
//  - Every server has a token: 32 random bytes as hex in <home>/token (mode 0600). It is
//    made at the first start and kept across restarts (running AMs carry it, and users'
//    CLIs read it); delete the file to rotate it. Its holder is the server's owner, an
//    administrator.
//  - Users: <home>/users.json (mode 0600, written by `shoal user add`, re-read when it
//    changes) gives each user a token of their own and says who is an administrator.
//  - Identify() maps an Authorization header ("Bearer <token>") to a Caller; an absent or
//    unknown token identifies nobody. Tokens are compared in constant time.
//  - An AM holds only its attempt's token (AttemptToken), valid for that attempt's
//    /internal/ routes (fetching the attempt, reporting) and nothing else; the server's own
//    token never leaves the server process.
//  - Requires() says whether a request must carry a valid token. State-changing calls
//    (anything but GET and HEAD) to /api/ and /internal/ always do. Reads (/api/ GETs,
//    /metrics) do only when the server listens beyond loopback. GET /api/v1/health, the
//    page and its static files never do: they hold no job data.
//  - AcceptsHost(): on loopback, a request whose Host header names anything but loopback
//    is refused (403) unless it carries a valid token.
// Thread-safety: safe from any thread; the user table is re-read under a mutex.
#pragma once

#include <memory>
#include <utility>
#include <optional>
#include <string>

#include "common/status.h"

namespace shoal {

// "localhost", an IPv4 address in 127.0.0.0/8 or the IPv6 loopback (bracketed or not);
// never a name that merely starts like one ("127.0.0.1.example.com").
bool IsLoopbackHost(const std::string& host);
// The host of a Host header: "127.0.0.1:7480" -> "127.0.0.1", "[::1]:80" -> "[::1]".
std::string HostOfHeader(const std::string& host_header);

// The identity behind a request's token.
struct Caller {
  std::string user;
  bool admin = false;
  // Set for an AM's attempt token: it speaks for that attempt's /internal/ routes only.
  std::optional<std::pair<std::string, int>> attempt;  // (job id, attempt number)
};

class UserTokens;

class ServerAuth {
 public:
  // The server's auth for `host`, with its token from <home>/token (made when missing),
  // and its users from <home>/users.json. `owner` names the server token's holder.
  static Result<ServerAuth> ForServer(const std::string& host, const std::string& home, const std::string& owner);
  // For tests: a fixed server token and no users file.
  static ServerAuth WithToken(std::string token, bool loopback, std::string owner = "owner");

  const std::string& token() const { return token_; }
  bool loopback() const { return loopback_; }
  bool Requires(const std::string& method, const std::string& path) const;
  // A server on loopback answers only requests addressed to loopback (against DNS
  // rebinding: a page that rebinds its own name to 127.0.0.1 sends that name as Host);
  // an absent Host is accepted (no browser omits it). Beyond loopback every Host is.
  bool AcceptsHost(const std::string& host_header) const;
  // `authorization` is the request's Authorization header ("" when absent).
  std::optional<Caller> Identify(const std::string& authorization) const;
  // The same, and also an AM's attempt token when `path` is one of that attempt's
  // /internal/v1/jobs/J/attempts/N routes.
  std::optional<Caller> Identify(const std::string& authorization, const std::string& path) const;
  // The token of one attempt: HMAC-SHA256 of "attempt J/N" under the server's token, so it
  // survives server restarts without being stored, and reveals nothing of the server's.
  std::string AttemptToken(const std::string& job_id, int attempt) const;
  // The name the server's own token stands for (its owner).
  const std::string& owner() const { return owner_; }
  // The Unix account a user is linked to in users.json (`shoal user add --unix-user`).
  std::optional<std::string> UnixUserOf(const std::string& user) const;

 private:
  ServerAuth(std::string token, bool loopback, std::string owner, std::shared_ptr<UserTokens> users);
  std::string token_;
  bool loopback_ = true;
  std::string owner_;
  std::shared_ptr<UserTokens> users_;  // null: no users file
};

std::string TokenPath(const std::string& home);

}  // namespace shoal
