// Helpers for the control plane's server side (the Shoal server and the AM), over
// cpp-httplib.
//
// Contract:
//  - ReplyJson / ReplyError write a JSON body with the right status.
//  - ParseBody returns the request body as a JSON object, or InvalidArgument.
//  - RouteJson wraps a handler that returns Result<Json>, so handlers never write
//    replies by hand and no exception escapes into the server loop. Handlers refuse bad
//    input through their Status (decode errors are 400s naming the field); an exception
//    is a bug: a 500, logged with the route.
#pragma once

#include <httplib.h>

#include <functional>
#include <thread>

#include "common/json.h"
#include "common/status.h"

namespace shoal {

void ReplyJson(httplib::Response& res, const Json& body, int status = 200);
void ReplyError(httplib::Response& res, const Status& status);
Result<Json> ParseBody(const httplib::Request& req);

using JsonHandler = std::function<Result<Json>(const httplib::Request&)>;
// Returns an httplib handler that runs `handler` and replies with its result or error.
httplib::Server::Handler RouteJson(JsonHandler handler);

// Binds the server to host:port (port 0: any free port) and returns the port.
Result<int> BindServer(httplib::Server& server, const std::string& host, int port);

// Serves a bound server on a new thread and returns that thread once the server is
// running, so a stop() right after is never lost (cpp-httplib ignores a stop() that
// comes before its accept loop starts). The caller joins the thread after stop().
std::thread ServeInBackground(httplib::Server& server);

}  // namespace shoal
