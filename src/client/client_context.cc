#include "client/client_context.h"

#include <cstdio>

#include "client/server_connection.h"

namespace shoal {

Result<HttpJsonClient> ClientContext::Connect() const {
  auto url = FindServer(home);
  if (!url.ok()) {
    if (url.status().code() == StatusCode::kNotFound) {
      return FailedPrecondition("no Shoal server is running (state in " + home +
                                "); `shoal run JOB.yaml` starts one, or start `shoal server`");
    }
    return url.status();
  }
  return HttpJsonClient(*url, 70'000);
}

Result<HttpJsonClient> ClientContext::ConnectOrStart() const {
  ASSIGN_OR_RETURN(std::string url, EnsureServer(home));
  return HttpJsonClient(url, 70'000);
}

int ReportError(const Status& status) {
  std::fprintf(stderr, "shoal: %s\n", status.message().c_str());
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
    case StatusCode::kAlreadyExists:
      return kExitBadInput;
    default:
      return kExitFailed;
  }
}

}  // namespace shoal
