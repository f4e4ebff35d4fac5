// HttpTransport: the one door from the S3 client to the network, so that retries,
// signing and error mapping are tested with a fake transport.
//
// Contract:
//  - Send performs one request and returns the reply whatever its status code; only a
//    failure to get a reply is an error, naming the URL: kUnavailable or kTimeout for a
//    refused or broken connection or a timeout (retried), kFailedPrecondition for an
//    https endpoint whose certificate is not trusted (a setting to fix, not retried).
//  - HEAD replies have an empty body. Header names in replies are lower-case.
//  - With a body_sink, a transport may hand a 2xx reply's body to the sink as it arrives
//    instead of keeping it (then the reply's body is empty); a sink error ends the
//    transfer and is returned. A transport may also ignore the sink and return the body.
// Thread-safety: implementations must allow concurrent Send calls.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace shoal::storage {

struct HttpRequest {
  std::string method;  // GET, PUT, POST, HEAD, DELETE
  std::string url;     // full URL with the encoded query string
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::function<Status(const char*, size_t)> body_sink;  // optional, see above
};

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  virtual Result<HttpResponse> Send(const HttpRequest& request) = 0;
};

// libcurl, one connection cache per thread (keep-alive); https endpoints are checked
// against `ca_bundle` (a PEM file) when it is set, else the system's certificates.
std::unique_ptr<HttpTransport> NewCurlTransport(std::string ca_bundle = "");

}  // namespace shoal::storage
