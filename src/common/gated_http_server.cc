#include "common/gated_http_server.h"

#include <sys/resource.h>

#include <algorithm>

#include "common/gate_stream.h"
#include "common/process.h"

namespace shoal {
namespace {

// cpp-httplib's accept loop posts each accepted socket here; running it inline is
// enough, since all it does is hand the socket to the gate.
class InlineQueue : public httplib::TaskQueue {
 public:
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override {}
};

constexpr rlim_t kOpenFilesWanted = 65'536;
constexpr size_t kDescriptorsKeptForTheRest = 512;  // job logs, the history, pipes to agents

}  // namespace

GateLimits FitToOpenFileLimit(GateLimits limits) {
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) != 0) return limits;
  rlim_t wanted = files.rlim_max == RLIM_INFINITY ? kOpenFilesWanted : std::min(files.rlim_max, kOpenFilesWanted);
  if (files.rlim_cur != RLIM_INFINITY && files.rlim_cur < wanted) {
    KeepChildrensOpenFileLimit(files.rlim_cur);  // jobs see the machine's usual limit, not the server's
    files.rlim_cur = wanted;
    if (setrlimit(RLIMIT_NOFILE, &files) != 0) getrlimit(RLIMIT_NOFILE, &files);
  }
  if (files.rlim_cur != RLIM_INFINITY) {
    size_t usable = files.rlim_cur > kDescriptorsKeptForTheRest * 2 ? files.rlim_cur - kDescriptorsKeptForTheRest
                                                                   : files.rlim_cur / 2;
    limits.max_connections = std::min(limits.max_connections, usable);
    limits.max_per_peer = std::min(limits.max_per_peer, limits.max_connections);
  }
  return limits;
}

GatedHttpServer::GatedHttpServer(size_t workers, GateLimits limits, std::chrono::milliseconds write_timeout)
    : write_timeout_(write_timeout),
      workers_(std::make_unique<httplib::ThreadPool>(workers)),
      gate_(std::move(limits), [this](std::unique_ptr<GateConnection> connection) {
        auto held = std::make_shared<std::unique_ptr<GateConnection>>(std::move(connection));
        workers_->enqueue([this, held] { Serve(std::move(*held)); });
      }) {
  new_task_queue = [] { return new InlineQueue; };
}

GatedHttpServer::~GatedHttpServer() {
  stop();
  gate_.Stop();
  workers_->shutdown();
}

bool GatedHttpServer::process_and_close_socket(socket_t sock) {
  gate_.Adopt(sock);
  return true;
}

void GatedHttpServer::Serve(std::unique_ptr<GateConnection> connection) {
  GateStream stream(*connection, write_timeout_);
  bool connection_closed = false;
  const auto& served = connection->served_params();
  bool answered = process_request(stream, /*close_connection=*/false, connection_closed, [&](httplib::Request& req) {
    req.headers.erase("Expect");  // the gate has answered "100 Continue" already
    for (const std::string& name : served) req.params.erase(name);
  });
  const bool sent = stream.Flush();
  if (!answered || connection_closed || !sent) return;  // closes the connection
  connection->ConsumeRequest();
  gate_.Resume(std::move(connection));
}

}  // namespace shoal
