#include "client/client_context.h"

#include <cstdio>

#include "client/server_connection.h"
#include "common/token_file.h"

namespace shoal {

namespace {

// The token goes with every call: calls that change state always need it, and every
// call does on a server beyond loopback.
HttpJsonClient ClientFor(const std::string& url, const std::string& home) {
  HttpJsonClient client(url, 70'000);
  if (std::string token = CallerToken(home); !token.empty()) client.set_bearer_token(token);
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
