// HttpStore: the client side of the rendezvous store served by the application
// master over HTTP (see http_store_handler.h for the server side).
//
// Contract: see store.h. The store lives at a URL prefix, for example
// "http://10.0.0.5:8700/rendezvous/job-7/attempt-2"; key k is the resource
// "<prefix>/k":  PUT sets it, GET returns 200 with the value or 404, and
// GET "?wait_ms=N" long-polls up to N ms (the server caps N). Wait repeats long
// polls until its own timeout. A server that cannot be reached is kUnavailable; it
// is retried inside Wait until the timeout, but not inside Set or Get.
// Thread-safety: thread-safe; each call opens its own HTTP connection.
#pragma once

#include <memory>

#include "collective/rendezvous/store.h"

namespace shoal::collective {

class HttpStore : public Store {
 public:
  // `url`: "http://host:port/path/prefix". Check it with Create.
  static Result<std::unique_ptr<HttpStore>> Create(const std::string& url);

  Status Set(const std::string& key, const std::string& value) override;
  Result<std::string> Get(const std::string& key) override;
  Status Wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;

 private:
  HttpStore(std::string host_port, std::string path) : host_port_(std::move(host_port)), path_(std::move(path)) {}
  // GET with an optional long-poll; sets *found.
  Result<std::string> Fetch(const std::string& key, int64_t wait_ms, bool* found);

  const std::string host_port_;  // "http://host:port"
  const std::string path_;       // "/rendezvous/job-7/attempt-2", no trailing slash
};

}  // namespace shoal::collective
