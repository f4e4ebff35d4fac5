#include "client/client_context.h"

#include <cstdio>

#include "client/server_connection.h"
#include "common/files.h"

namespace shoal {

namespace {

// A server that listens beyond loopback wants its token (<home>/token) on every call.
HttpJsonClient ClientFor(const std::string& url, const std::string& home) {
  HttpJsonClient client(url, 70'000);
  if (auto token = ReadFile(home + "/token"); token.ok()) {
    std::string value = *token;
    while (!value.empty() && (value.back() == '\n' || value.back() == '\r' || value.back() == ' ')) value.pop_back();
    client.set_bearer_token(value);
  }
  return client;
}

}  // namespace

Result<HttpJsonClient> ClientContext::Connect() const {
  auto url = FindServer(home);
  if (!url.ok()) {
    if (url.status().code() == StatusCode::kNotFound) {
      return FailedPrecondition("no Shoal server is running (state in " + home +
                                "); `shoal run JOB.yaml` starts one, or start `shoal server`");
    }
    return url.status();
  }
  return ClientFor(*url, home);
}

Result<HttpJsonClient> ClientContext::ConnectOrStart() const {
  ASSIGN_OR_RETURN(std::string url, EnsureServer(home));
  return ClientFor(url, home);
}

int ReportError(const Status& status) {
  std::fprintf(stderr, "shoal: %s\n", status.message().c_str());
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
    case StatusCode::kAlreadyExists:
    case StatusCode::kPermissionDenied:
      return kExitBadInput;
    default:
      return kExitFailed;
  }
}

}  // namespace shoal
