#include "collective/rendezvous/http_store_handler.h"

#include <httplib.h>

namespace shoal::collective {

void HttpStoreHandler::Mount(httplib::Server& server, const std::string& base) {
  const std::string pattern = base + "/(.+)";
  server.Put(pattern, [this](const httplib::Request& req, httplib::Response& res) {
    Status s = store_.Set(req.matches[1], req.body);
    res.status = s.ok() ? 204 : 400;
    if (!s.ok()) res.set_content(s.message(), "text/plain");
  });
  server.Get(pattern, [this](const httplib::Request& req, httplib::Response& res) {
    const std::string key = req.matches[1];
    if (!IsValidStoreKey(key)) {
      res.status = 400;
      res.set_content("bad rendezvous key '" + key + "'", "text/plain");
      return;
    }
    if (req.has_param("wait_ms")) {
      int64_t wait_ms = std::atoll(req.get_param_value("wait_ms").c_str());
      wait_ms = std::clamp<int64_t>(wait_ms, 0, max_wait_.count());
      (void)store_.Wait({key}, std::chrono::milliseconds(wait_ms));
    }
    auto value = store_.Get(key);
    if (!value.ok()) {
      res.status = 404;
      res.set_content(value.status().message(), "text/plain");
      return;
    }
    res.status = 200;
    res.set_content(*value, "application/octet-stream");
  });
  server.Delete(pattern, [this](const httplib::Request& req, httplib::Response& res) {
    size_t n = store_.EraseWithPrefix(std::string(req.matches[1]) + "/");
    res.status = 200;
    res.set_content(std::to_string(n), "text/plain");
  });
}

}  // namespace shoal::collective
