#include <algorithm>
#include <cctype>
#include <string>
#include <utility>

#include "storage/s3/curl_library.h"
#include "storage/s3/http_transport.h"

namespace shoal::storage {
namespace {

struct BodyTarget {
  const CurlLibrary* lib;
  CURL* curl;
  const HttpRequest* request;
  HttpResponse* response;
  Status sink_error;
};

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* target = static_cast<BodyTarget*>(user);
  long code = 0;
  target->lib->easy_getinfo(target->curl, CURLINFO_RESPONSE_CODE, &code);
  if (target->request->body_sink && code >= 200 && code < 300) {
    target->sink_error = target->request->body_sink(data, size * n);
    return target->sink_error.ok() ? size * n : 0;
  }
  target->response->body.append(data, size * n);
  return size * n;
}

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  std::string line(data, size * n);
  size_t colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    std::string value = line.substr(colon + 1);
    size_t b = value.find_first_not_of(" \t");
    size_t e = value.find_last_not_of(" \t\r\n");
    value = b == std::string::npos ? "" : value.substr(b, e - b + 1);
    (*static_cast<std::map<std::string, std::string>*>(user))[name] = value;
  }
  return size * n;
}

struct Handle {
  const CurlLibrary* lib;
  CURL* curl;
  explicit Handle(const CurlLibrary* library) : lib(library), curl(library->easy_init()) {}
  ~Handle() { lib->easy_cleanup(curl); }
};

class CurlTransport final : public HttpTransport {
 public:
  explicit CurlTransport(std::string ca_bundle) : ca_bundle_(std::move(ca_bundle)) {}

  Result<HttpResponse> Send(const HttpRequest& request) override {
    ASSIGN_OR_RETURN(const CurlLibrary* lib, CurlLibrary::Load());
    thread_local Handle handle(lib);  // keeps the connection alive between requests
    CURL* curl = handle.curl;
    if (!curl) return Unavailable(request.method + " " + request.url + ": curl_easy_init failed");
    lib->easy_reset(curl);
    HttpResponse response;
    lib->easy_setopt(curl, CURLOPT_URL, request.url.c_str());
    lib->easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    lib->easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 10'000L);
    // A stalled transfer (under 1 KiB/s for 30 s) counts as a broken connection.
    lib->easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1024L);
    lib->easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, 30L);
    if (!ca_bundle_.empty()) lib->easy_setopt(curl, CURLOPT_CAINFO, ca_bundle_.c_str());
    lib->easy_setopt(curl, CURLOPT_WRITEFUNCTION, OnBody);
    BodyTarget target{lib, curl, &request, &response, Status::Ok()};
    lib->easy_setopt(curl, CURLOPT_WRITEDATA, &target);
    lib->easy_setopt(curl, CURLOPT_HEADERFUNCTION, OnHeader);
    lib->easy_setopt(curl, CURLOPT_HEADERDATA, &response.headers);
    if (request.method == "HEAD") {
      lib->easy_setopt(curl, CURLOPT_NOBODY, 1L);
    } else if (request.method != "GET") {
      lib->easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    }
    if (request.method == "PUT" || request.method == "POST") {
      lib->easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
      lib->easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    }
    struct curl_slist* headers = nullptr;
    for (const auto& [name, value] : request.headers) headers = lib->slist_append(headers, (name + ": " + value).c_str());
    headers = lib->slist_append(headers, "Expect:");
    headers = lib->slist_append(headers, "Content-Type:");
    lib->easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    CURLcode rc = lib->easy_perform(curl);
    lib->slist_free_all(headers);
    if (rc == CURLE_WRITE_ERROR && !target.sink_error.ok()) return target.sink_error;
    if (rc != CURLE_OK) {
      std::string message = request.method + " " + request.url + ": " + lib->easy_strerror(rc);
      if (rc == CURLE_OPERATION_TIMEDOUT) return Timeout(message);
      if (rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE) {
        return FailedPrecondition(message + "; fix: set AWS_CA_BUNDLE (or ca_bundle in the AWS config file) to the PEM "
                                            "file of the CA that signed the endpoint's certificate");
      }
      return Unavailable(message);
    }
    long code = 0;
    lib->easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
    response.status = static_cast<int>(code);
    return response;
  }

 private:
  const std::string ca_bundle_;
};

}  // namespace

std::unique_ptr<HttpTransport> NewCurlTransport(std::string ca_bundle) {
  return std::make_unique<CurlTransport>(std::move(ca_bundle));
}

}  // namespace shoal::storage
