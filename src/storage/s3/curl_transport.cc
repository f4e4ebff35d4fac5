#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <mutex>

#include "storage/s3/http_transport.h"

namespace shoal::storage {
namespace {

struct BodyTarget {
  CURL* curl;
  const HttpRequest* request;
  HttpResponse* response;
  Status sink_error;
};

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* target = static_cast<BodyTarget*>(user);
  long code = 0;
  curl_easy_getinfo(target->curl, CURLINFO_RESPONSE_CODE, &code);
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
  CURL* curl = nullptr;
  Handle() { curl = curl_easy_init(); }
  ~Handle() { curl_easy_cleanup(curl); }
};

class CurlTransport final : public HttpTransport {
 public:
  CurlTransport() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  }

  Result<HttpResponse> Send(const HttpRequest& request) override {
    thread_local Handle handle;  // keeps the connection alive between requests
    CURL* curl = handle.curl;
    curl_easy_reset(curl);
    HttpResponse response;
    curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 10'000L);
    // A stalled transfer (under 1 KiB/s for 30 s) counts as a broken connection.
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1024L);
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, 30L);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, OnBody);
    BodyTarget target{curl, &request, &response, Status::Ok()};
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &target);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, OnHeader);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &response.headers);
    if (request.method == "HEAD") {
      curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
    } else if (request.method != "GET") {
      curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    }
    if (request.method == "PUT" || request.method == "POST") {
      curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
      curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    }
    struct curl_slist* headers = nullptr;
    for (const auto& [name, value] : request.headers) headers = curl_slist_append(headers, (name + ": " + value).c_str());
    headers = curl_slist_append(headers, "Expect:");
    headers = curl_slist_append(headers, "Content-Type:");
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    CURLcode rc = curl_easy_perform(curl);
    curl_slist_free_all(headers);
    if (rc == CURLE_WRITE_ERROR && !target.sink_error.ok()) return target.sink_error;
    if (rc != CURLE_OK) {
      std::string message = request.method + " " + request.url + ": " + curl_easy_strerror(rc);
      if (rc == CURLE_OPERATION_TIMEDOUT) return Timeout(message);
      return Unavailable(message);
    }
    long code = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
    response.status = static_cast<int>(code);
    return response;
  }
};

}  // namespace

std::unique_ptr<HttpTransport> NewCurlTransport() { return std::make_unique<CurlTransport>(); }

}  // namespace shoal::storage
