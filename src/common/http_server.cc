#include "common/http_server.h"

#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <cstdlib>
#include <exception>

#include "common/log.h"

namespace shoal {

void ReplyJson(httplib::Response& res, const Json& body, int status) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, Json::error_handler_t::replace), "application/json");
}

void ReplyError(httplib::Response& res, const Status& status) {
  ReplyJson(res, ErrorBody(status), HttpStatusFor(status.code()));
}

Result<Json> ParseBody(const httplib::Request& req) {
  ASSIGN_OR_RETURN(Json body, ParseJson(req.body, "the request body"));
  if (!body.is_object()) return InvalidArgument("the request body must be a JSON object");
  return body;
}

httplib::Server::Handler RouteJson(JsonHandler handler) {
  return [handler = std::move(handler)](const httplib::Request& req, httplib::Response& res) {
    try {
      Result<Json> result = handler(req);
      if (result.ok()) ReplyJson(res, result.value());
      else ReplyError(res, result.status());
    } catch (const std::exception& e) {
      // Bad input is refused by the decoders (a 400 naming the field); an exception here
      // is a bug in Shoal: a 500, logged with its route.
      LogError("internal error in " + req.method + " " + req.path + ": " + e.what());
      ReplyError(res, Internal("the server failed on " + req.method + " " + req.path + " (" + e.what() +
                               "); this is a bug in Shoal, and the server's log has the details"));
    }
  };
}

namespace {

// Debian's cpp-httplib is a compiled library whose listen backlog is fixed at 5: when
// 16 containers register at once, the sixth connection's SYN is dropped and retried a
// second later. Linux lets listen() be called again to raise the backlog, so find the
// server's listening socket by its port and do that.
void RaiseListenBacklog(int port) {
  DIR* fds = opendir("/proc/self/fd");
  if (!fds) return;
  while (dirent* entry = readdir(fds)) {
    int fd = std::atoi(entry->d_name);
    if (fd <= 2) continue;
    int listening = 0;
    socklen_t len = sizeof listening;
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening) continue;
    sockaddr_storage addr{};
    socklen_t addr_len = sizeof addr;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &addr_len) != 0) continue;
    int bound = addr.ss_family == AF_INET ? ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port)
                : addr.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port)
                                             : -1;
    if (bound == port) listen(fd, SOMAXCONN);
  }
  closedir(fds);
}

}  // namespace

Result<int> BindServer(httplib::Server& server, const std::string& host, int port) {
  // cpp-httplib sets SO_REUSEPORT by default, which lets a second server bind the same
  // port and take half of the first one's connections. Shoal wants a busy port refused.
  server.set_socket_options([](int sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  if (port == 0) {
    port = server.bind_to_any_port(host.c_str());
    if (port <= 0) return Unavailable("cannot listen on " + host);
  } else if (!server.bind_to_port(host.c_str(), port)) {
    return Unavailable("cannot listen on " + host + ":" + std::to_string(port) +
                       " (is another server using it? pick another port)");
  }
  RaiseListenBacklog(port);
  return port;
}

}  // namespace shoal

namespace shoal {

std::thread ServeInBackground(httplib::Server& server) {
  auto ended = std::make_shared<std::atomic<bool>>(false);
  std::thread serving([&server, ended] {
    server.listen_after_bind();
    *ended = true;
  });
  while (!server.is_running() && !*ended) std::this_thread::sleep_for(std::chrono::microseconds(200));
  return serving;
}

}  // namespace shoal
