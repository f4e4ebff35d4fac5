#include "server/server_hooks.h"

#include <chrono>

#include "common/http_server.h"

namespace shoal {
namespace {

// A worker thread handles one request from routing to logging, so the start time of
// the request it is on can live in a thread_local.
thread_local std::chrono::steady_clock::time_point request_started;

// cpp-httplib answers a browser (Accept-Encoding: gzip, deflate, br) with brotli at
// its slowest quality: a 3.5 MB job detail took over 10 s to compress. Without "br"
// it picks gzip at zlib's default level, a few milliseconds for the same body. The
// request is the library's own mutable object, handed to this hook as const.
void PreferGzip(const httplib::Request& req) {
  auto it = req.headers.find("Accept-Encoding");
  if (it == req.headers.end() || it->second.find("br") == std::string::npos) return;
  std::string& value = const_cast<std::string&>(it->second);
  for (size_t at; (at = value.find("br")) != std::string::npos;) value.replace(at, 2, "identity");
}

}  // namespace

void InstallServerHooks(httplib::Server& http, const ServerAuth& auth, RequestMetrics& metrics,
                        const std::string& token_path) {
  http.set_payload_max_length(64u << 20);
  // Without it a keep-alive reply split in two writes waits ~40 ms on the peer's delayed ACK.
  http.set_tcp_nodelay(true);
  http.set_pre_routing_handler([&auth, token_path](const httplib::Request& req, httplib::Response& res) {
    request_started = std::chrono::steady_clock::now();
    PreferGzip(req);
    const std::string host = req.get_header_value("Host");
    bool host_accepted = auth.AcceptsHost(host);
    bool needs_token = auth.Requires(req.method, req.path);
    if (host_accepted && !needs_token) return httplib::Server::HandlerResponse::Unhandled;
    bool identified = auth.Identify(req.get_header_value("Authorization"), req.path).has_value();
    if (!host_accepted && !identified) {
      ReplyJson(res,
                ErrorBody(PermissionDenied("this server listens on loopback and answers only requests addressed to it "
                                           "there, not to Host '" + host.substr(0, 200) + "' (a page that points its own "
                                           "name at this machine must not read its jobs); use http://127.0.0.1:PORT or "
                                           "http://localhost:PORT, or send a token")),
                403);
      return httplib::Server::HandlerResponse::Handled;
    }
    if (!needs_token || identified) return httplib::Server::HandlerResponse::Unhandled;
    std::string what = auth.loopback() ? "changes state" : "goes to a server that listens beyond loopback";
    ReplyJson(res,
              ErrorBody(PermissionDenied(req.method + " " + req.path + " " + what + " and needs a token: send the header "
                                         "`Authorization: Bearer <token>` with the server's token (in " + token_path +
                                         ") or a user's own (`shoal user add NAME` gives one)")),
              401);
    return httplib::Server::HandlerResponse::Handled;
  });
  http.set_logger([&metrics](const httplib::Request& req, const httplib::Response&) {
    std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - request_started;
    metrics.Observe(req.method, req.path, elapsed.count());
  });
}

}  // namespace shoal
