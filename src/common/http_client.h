// HttpJsonClient: the control plane's client side (CLI to server, AM to server,
// container to AM).
//
// Contract:
//  - base_url is "http://host:port" (CheckHttpUrl); any other is InvalidArgument on every
//    call, never an exception. Paths start with "/".
//  - A reply 2xx returns its JSON body (an empty body is null). A reply with an error
//    body returns that Status; a connection failure is kUnavailable naming the URL; a
//    reply past the timeout is kTimeout.
//  - Each call opens its own connection, so one client may be used from several threads;
//    after KeepAlive(), the client's calls share one kept-alive connection instead, one
//    call at a time (for a steady stream of small calls, such as an agent's heartbeats).
//    A call that fails on a reused connection (the server closed it while idle) is sent
//    once more on a new one.
#pragma once

#include <memory>
#include <string>

#include "common/json.h"
#include "common/status.h"

namespace shoal {

class HttpJsonClient {
 public:
  explicit HttpJsonClient(std::string base_url, int timeout_ms = 10'000)
      : base_url_(std::move(base_url)), timeout_ms_(timeout_ms) {}

  Result<Json> Get(const std::string& path, int timeout_ms = -1) const;
  Result<Json> Post(const std::string& path, const Json& body, int timeout_ms = -1) const;
  // A GET whose body is returned as text (logs).
  Result<std::string> GetText(const std::string& path, int timeout_ms = -1) const;

  const std::string& base_url() const { return base_url_; }
  // Sends `Authorization: Bearer <token>` with every request (a server beyond loopback).
  void set_bearer_token(std::string token) { token_ = std::move(token); }
  void KeepAlive();

 private:
  struct KeptConnection;
  Result<std::string> Send(const std::string& method, const std::string& path, const std::string* body,
                           int timeout_ms) const;

  std::string base_url_;
  int timeout_ms_;
  std::string token_;
  std::shared_ptr<KeptConnection> kept_;  // set by KeepAlive()
};

// Whether url is "http://host[:port]" and nothing else (no path, no user, no other
// scheme): InvalidArgument naming it otherwise.
Status CheckHttpUrl(const std::string& url);

// Percent-encodes a query parameter value.
std::string UrlEncode(const std::string& value);

}  // namespace shoal
