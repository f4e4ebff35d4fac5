#include "common/request_framing.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace shoal {
namespace {

constexpr std::string_view kLineEnd = "\r\n";
constexpr std::string_view kHeadEnd = "\r\n\r\n";
constexpr size_t kMaxMethod = 32;
constexpr size_t kMaxContentLengthDigits = 18;  // fits an int64 with room to spare

bool IsTokenChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}

bool IsToken(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), IsTokenChar); }

bool IsControl(char c) {
  auto u = static_cast<unsigned char>(c);
  return (u < 0x20 && c != '\t') || u == 0x7f;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

FramingRefusal Refuse(int status, std::string reason) { return FramingRefusal{status, std::move(reason)}; }

FramingRefusal NotHttp(const std::string& what) {
  return Refuse(400, "the request is not HTTP/1.1: " + what + "; send a request such as `GET /api/v1/health HTTP/1.1`");
}

// Refuses a request line that cannot become valid however many bytes follow: a method
// that is not a token, or a line longer than any target allowed (checked before the
// head's size, so a long URL is a 414 whatever follows it).
std::optional<FramingRefusal> RefuseEarly(std::string_view bytes, const RequestLimits& limits) {
  size_t space = bytes.find(' ');
  std::string_view method = bytes.substr(0, std::min(space, kMaxMethod + 1));
  if (!std::all_of(method.begin(), method.end(), IsTokenChar) || (space == std::string_view::npos && method.size() > kMaxMethod) ||
      space == 0) {
    return NotHttp("it does not start with a method such as GET or POST");
  }
  size_t line_size = std::min(bytes.find(kLineEnd), bytes.size());
  if (line_size > kMaxMethod + limits.max_target + 16) {
    return Refuse(414, "the request target is longer than " + std::to_string(limits.max_target) +
                           " bytes; send long parameters in a POST body instead");
  }
  return std::nullopt;
}

struct RequestLine {
  std::string_view method, target;
};

std::variant<RequestLine, FramingRefusal> ParseRequestLine(std::string_view line, const RequestLimits& limits) {
  size_t first = line.find(' ');
  size_t last = line.rfind(' ');
  if (first == std::string_view::npos || first == last) return NotHttp("its request line is not `METHOD TARGET HTTP/1.1`");
  RequestLine parsed{line.substr(0, first), line.substr(first + 1, last - first - 1)};
  std::string_view version = line.substr(last + 1);
  if (!IsToken(parsed.method) || parsed.method.size() > kMaxMethod) return NotHttp("its method is not a word such as GET");
  if (parsed.target.size() > limits.max_target) {
    return Refuse(414, "the request target is " + std::to_string(parsed.target.size()) + " bytes, over the limit of " +
                           std::to_string(limits.max_target) + "; send long parameters in a POST body instead");
  }
  if (parsed.target.empty() || std::any_of(parsed.target.begin(), parsed.target.end(), [](char c) {
        return IsControl(c) || c == ' ' || c == '\t';
      })) {
    return NotHttp("its target holds a space or a control character");
  }
  if (version == "HTTP/1.1" || version == "HTTP/1.0") return parsed;
  if (version.size() == 8 && version.starts_with("HTTP/") && std::isdigit(static_cast<unsigned char>(version[5])) &&
      version[6] == '.' && std::isdigit(static_cast<unsigned char>(version[7]))) {
    return Refuse(505, std::string(version) + " is not served; use HTTP/1.1");
  }
  return NotHttp("its version is not HTTP/1.1");
}

struct BodyFraming {
  size_t content_length = 0;
  bool expects_continue = false;
};

std::variant<BodyFraming, FramingRefusal> ParseHeaders(std::string_view headers, const RequestLimits& limits) {
  BodyFraming body;
  std::optional<std::string_view> content_length;
  bool chunked = false;
  while (!headers.empty()) {
    size_t end = headers.find(kLineEnd);
    std::string_view line = headers.substr(0, end);
    headers.remove_prefix(end == std::string_view::npos ? headers.size() : end + kLineEnd.size());
    if (line.empty()) continue;
    if (line.front() == ' ' || line.front() == '\t') return NotHttp("a header is folded onto a second line");
    size_t colon = line.find(':');
    if (line.size() + kLineEnd.size() > limits.max_header_line) {
      return Refuse(431, "the header " + std::string(line.substr(0, std::min<size_t>(colon, 64))) + " is longer than " +
                             std::to_string(limits.max_header_line) + " bytes, the most one header line may hold");
    }
    if (colon == std::string_view::npos) return NotHttp("a header line has no colon");
    std::string_view name = line.substr(0, colon);
    std::string_view value = TrimBlanks(line.substr(colon + 1));
    if (!IsToken(name)) return NotHttp("the header name '" + std::string(name.substr(0, 64)) + "' is not a token");
    if (std::any_of(value.begin(), value.end(), IsControl)) {
      return NotHttp("the header " + std::string(name) + " holds a control character");
    }
    if (EqualsIgnoreCase(name, "Content-Length")) {
      if (value.empty() || value.size() > kMaxContentLengthDigits ||
          !std::all_of(value.begin(), value.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
        return NotHttp("Content-Length '" + std::string(value.substr(0, 32)) + "' is not a byte count");
      }
      if (content_length && *content_length != value) {
        return NotHttp("it has two different Content-Length headers (" + std::string(*content_length) + " and " +
                       std::string(value) + ")");
      }
      content_length = value;
    } else if (EqualsIgnoreCase(name, "Transfer-Encoding")) {
      chunked = true;
    } else if (EqualsIgnoreCase(name, "Expect") && EqualsIgnoreCase(value, "100-continue")) {
      body.expects_continue = true;
    }
  }
  if (chunked && content_length) return NotHttp("it has both Transfer-Encoding and Content-Length");
  if (chunked) return Refuse(411, "the request body has no Content-Length; send it with one");
  if (content_length) body.content_length = std::stoull(std::string(*content_length));
  if (body.content_length > limits.max_body) {
    return Refuse(413, "the request body is " + std::to_string(body.content_length) + " bytes, over the server's limit of " +
                           std::to_string(limits.max_body));
  }
  return body;
}

}  // namespace

Framing FrameRequest(std::string_view bytes, const RequestLimits& limits) {
  if (auto refused = RefuseEarly(bytes, limits)) return *refused;
  size_t line_end = bytes.find(kLineEnd);
  size_t head_end = line_end == std::string_view::npos ? line_end : bytes.find(kHeadEnd, line_end);
  if (head_end == std::string_view::npos) {
    if (bytes.size() > limits.max_head) {
      return Refuse(431, "the request's headers are longer than " + std::to_string(limits.max_head) + " bytes");
    }
    return NeedMoreBytes{};
  }
  size_t head_size = head_end + kHeadEnd.size();
  if (head_size > limits.max_head) {
    return Refuse(431, "the request's headers are longer than " + std::to_string(limits.max_head) + " bytes");
  }
  std::string_view head = bytes.substr(0, head_end);
  // Every CR and LF in the head must come as a pair.
  for (size_t i = 0; i < head.size(); ++i) {
    if ((head[i] == '\r' && (i + 1 >= head.size() || head[i + 1] != '\n')) || (head[i] == '\n' && (i == 0 || head[i - 1] != '\r'))) {
      return NotHttp("a line ends in a bare CR or LF");
    }
  }
  auto line = ParseRequestLine(head.substr(0, line_end), limits);
  if (auto* refused = std::get_if<FramingRefusal>(&line)) return *refused;
  auto body = ParseHeaders(line_end < head.size() ? head.substr(line_end + kLineEnd.size()) : std::string_view(), limits);
  if (auto* refused = std::get_if<FramingRefusal>(&body)) return *refused;
  const auto& framing = std::get<BodyFraming>(body);
  size_t total = head_size + framing.content_length;
  if (bytes.size() < total) return NeedMoreBytes{total, framing.expects_continue};
  const auto& parsed = std::get<RequestLine>(line);
  return FramedRequest{head_size, total, std::string(parsed.method), std::string(parsed.target)};
}

std::optional<std::string_view> QueryParameter(std::string_view target, std::string_view name) {
  size_t question = target.find('?');
  if (question == std::string_view::npos) return std::nullopt;
  std::string_view query = target.substr(question + 1);
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query.remove_prefix(amp == std::string_view::npos ? query.size() : amp + 1);
    size_t eq = pair.find('=');
    if (pair.substr(0, eq) == name) return eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
  }
  return std::nullopt;
}

}  // namespace shoal
