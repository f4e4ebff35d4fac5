#include "common/http_server.h"

#include <exception>

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
      // A malformed value deep in a body (a string where a number belongs) lands here.
      ReplyError(res, InvalidArgument(std::string("bad request: ") + e.what()));
    }
  };
}

Result<int> BindServer(httplib::Server& server, const std::string& host, int port) {
  if (port == 0) {
    int bound = server.bind_to_any_port(host.c_str());
    if (bound <= 0) return Unavailable("cannot listen on " + host);
    return bound;
  }
  if (!server.bind_to_port(host.c_str(), port)) {
    return Unavailable("cannot listen on " + host + ":" + std::to_string(port) +
                       " (is another server using it? pick another port)");
  }
  return port;
}

}  // namespace shoal
