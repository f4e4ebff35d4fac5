#include "common/http_client.h"

#include <httplib.h>

#include <mutex>

namespace shoal {

struct HttpJsonClient::KeptConnection {
  std::mutex mutex;
  std::unique_ptr<httplib::Client> client;  // null until the first call, and after a failed one
};

void HttpJsonClient::KeepAlive() { kept_ = std::make_shared<KeptConnection>(); }

namespace {

void SetTimeouts(httplib::Client& client, int timeout_ms) {
  time_t sec = timeout_ms / 1000;
  time_t usec = (timeout_ms % 1000) * 1000;
  client.set_connection_timeout(5, 0);
  client.set_read_timeout(sec, usec);
  client.set_write_timeout(sec, usec);
}

}  // namespace

Result<std::string> HttpJsonClient::Send(const std::string& method, const std::string& path,
                                         const std::string* body, int timeout_ms) const {
  if (timeout_ms < 0) timeout_ms = timeout_ms_;
  RETURN_IF_ERROR(CheckHttpUrl(base_url_));
  auto make = [&] {
    // Throws for a scheme it does not know: CheckHttpUrl ruled those out.
    auto client = std::make_unique<httplib::Client>(base_url_);
    if (!token_.empty()) client->set_bearer_token_auth(token_.c_str());
    client->set_keep_alive(kept_ != nullptr);
    // A request goes out as head then body: on a kept-alive connection Nagle's algorithm
    // would hold the body until the server's delayed ACK, 40 ms later.
    client->set_tcp_nodelay(kept_ != nullptr);
    return client;
  };
  auto send = [&](httplib::Client& client) {
    SetTimeouts(client, timeout_ms);
    return method == "GET" ? client.Get(path.c_str())
                           : client.Post(path.c_str(), body ? *body : std::string(), "application/json");
  };
  std::unique_ptr<httplib::Client> own;
  std::unique_lock<std::mutex> lock;
  httplib::Client* client = nullptr;
  bool reused = false;
  if (kept_) {
    lock = std::unique_lock(kept_->mutex);
    reused = kept_->client != nullptr;
    if (!reused) kept_->client = make();
    client = kept_->client.get();
  } else {
    own = make();
    client = own.get();
  }
  if (!client->is_valid()) return InvalidArgument("'" + base_url_ + "' is not a valid http:// address");
  httplib::Result result = send(*client);
  if (!result && kept_ && reused && result.error() != httplib::Error::Read) {
    kept_->client = make();  // the server closed the idle connection as the call went out
    client = kept_->client.get();
    result = send(*client);
  }
  if (!result) {
    if (kept_) kept_->client.reset();
    httplib::Error error = result.error();
    if (error == httplib::Error::Read && timeout_ms > 0) {
      return Timeout("no answer from " + base_url_ + path + " within " + std::to_string(timeout_ms) + " ms");
    }
    return Unavailable("cannot reach " + base_url_ + ": " + httplib::to_string(error));
  }
  if (result->status < 200 || result->status >= 300) return StatusFromErrorBody(result->status, result->body);
  return std::move(result->body);
}

Result<Json> HttpJsonClient::Get(const std::string& path, int timeout_ms) const {
  ASSIGN_OR_RETURN(std::string body, Send("GET", path, nullptr, timeout_ms));
  if (body.empty()) return Json();
  return ParseJson(body, "the reply of " + base_url_ + path);
}

Result<Json> HttpJsonClient::Post(const std::string& path, const Json& body, int timeout_ms) const {
  std::string text = body.dump();
  ASSIGN_OR_RETURN(std::string reply, Send("POST", path, &text, timeout_ms));
  if (reply.empty()) return Json();
  return ParseJson(reply, "the reply of " + base_url_ + path);
}

Result<std::string> HttpJsonClient::GetText(const std::string& path, int timeout_ms) const {
  return Send("GET", path, nullptr, timeout_ms);
}

Status CheckHttpUrl(const std::string& url) {
  std::string rest = url.starts_with("http://") ? url.substr(7) : "";
  if (rest.ends_with("/")) rest.pop_back();
  if (rest.empty() || rest.find_first_of(" \t\r\n/?#@") != std::string::npos) {
    return InvalidArgument("'" + url + "' is not an http:// address of a Shoal server; write it as http://HOST:PORT");
  }
  return Status::Ok();
}

std::string UrlEncode(const std::string& value) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : value) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

}  // namespace shoal
