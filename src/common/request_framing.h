// Finds where one HTTP/1.1 request ends in the bytes a client has sent so far, without
// trusting the client. The server's connection gate (common/connection_gate.h) frames
// each request before any worker thread sees it, so a request is refused here, with the
// status a browser or curl expects, when it could never be served:
//
//   414  the request target is longer than RequestLimits::max_target
//   431  the request line and headers together exceed RequestLimits::max_head, or one
//        header line (with its CRLF) exceeds max_header_line, cpp-httplib's own limit
//   413  Content-Length exceeds RequestLimits::max_body
//   411  a body sent without Content-Length (Transfer-Encoding), which Shoal's API never needs
//   400  anything that is not HTTP/1.x: a malformed request line or header, a bare CR or LF,
//        a folded header, a Content-Length that is not a number, two different
//        Content-Length headers (a request smuggler's favourite)
//   505  an HTTP version other than 1.0 and 1.1
//
// Contract: FrameRequest is a pure function of its input; it never reads more than
// max_head + max_body bytes, and an incomplete request whose head is already too long is
// refused at once rather than waited for. It does not interpret anything else (routes,
// query strings and the rest of the headers are cpp-httplib's work once a worker has the
// request). QueryParameter reads one parameter of a target, for rules that decide before
// dispatch (a long poll's parking).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace shoal {

struct RequestLimits {
  size_t max_target = 8 * 1024;
  size_t max_head = 64 * 1024;
  size_t max_header_line = 8 * 1024;  // CPPHTTPLIB_HEADER_MAX_LENGTH: longer, it reads no request
  size_t max_body = 64 * 1024 * 1024;
};

// More bytes are needed. Once the head is in, total_size says how long the request is.
struct NeedMoreBytes {
  std::optional<size_t> total_size;
  bool expects_continue = false;  // the client waits for "100 Continue" before its body
};

struct FramedRequest {
  size_t head_size = 0;   // request line and headers, with the blank line
  size_t total_size = 0;  // head and body: where the next pipelined request starts
  std::string method;
  std::string target;
};

struct FramingRefusal {
  int http_status = 400;
  std::string reason;  // a sentence for the client: what was wrong and what to do
};

using Framing = std::variant<NeedMoreBytes, FramedRequest, FramingRefusal>;

Framing FrameRequest(std::string_view bytes, const RequestLimits& limits);

// The value of `name` in the target's query string ("/a?x=1&y=2"), percent-decoding not
// applied (rules use it for numbers); nullopt when absent.
std::optional<std::string_view> QueryParameter(std::string_view target, std::string_view name);

}  // namespace shoal
