#include "common/json.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace shoal {
namespace {

// Whether arrays and objects in `text` nest deeper than `limit` (brackets inside strings
// do not count). nlohmann parses any depth without recursion, but copying, dumping and
// comparing a value recurse once per level: a request body of "[[[[..." a megabyte deep
// overflowed the stack of the server's thread that handled it.
bool NestsDeeperThan(const std::string& text, int limit) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

}  // namespace

Result<Json> ParseJson(const std::string& text, const std::string& what) {
  if (NestsDeeperThan(text, kMaxJsonDepth)) {
    return InvalidArgument(what + " nests arrays or objects more than " + std::to_string(kMaxJsonDepth) + " levels deep");
  }
  // A key given twice in one object would silently keep one of the two values (two roles
  // both named "w", "instances" given twice): it is refused instead, naming the key.
  std::vector<std::set<std::string>> keys_of_open_objects;
  std::optional<std::string> given_twice;
  auto watch_keys = [&](int, Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::object_start) keys_of_open_objects.emplace_back();
    if (event == Json::parse_event_t::object_end && !keys_of_open_objects.empty()) keys_of_open_objects.pop_back();
    if (event == Json::parse_event_t::key && !keys_of_open_objects.empty() && !given_twice &&
        !keys_of_open_objects.back().insert(parsed.get<std::string>()).second) {
      given_twice = parsed.get<std::string>();
    }
    return true;
  };
  Json value = Json::parse(text, watch_keys, /*allow_exceptions=*/false);
  if (value.is_discarded()) return InvalidArgument(what + " is not valid JSON");
  if (given_twice) {
    return InvalidArgument(what + " gives the key '" + given_twice->substr(0, 64) +
                           "' twice in one object; give each key once");
  }
  return value;
}

Json ErrorBody(const Status& status) {
  return Json{{"error", {{"code", StatusCodeName(status.code())}, {"message", status.message()}}}};
}

int HttpStatusFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return 200;
    case StatusCode::kInvalidArgument: return 400;
    case StatusCode::kNotFound: return 404;
    case StatusCode::kAlreadyExists:
    case StatusCode::kFailedPrecondition: return 409;
    case StatusCode::kResourceExhausted: return 413;
    case StatusCode::kUnavailable: return 503;
    case StatusCode::kTimeout: return 504;
    case StatusCode::kAborted: return 410;
    case StatusCode::kPermissionDenied: return 403;
    case StatusCode::kInternal: return 500;
  }
  return 500;
}

Status StatusFromErrorBody(int http_status, const std::string& body) {
  Json value = Json::parse(body, nullptr, false);
  std::string message = "HTTP " + std::to_string(http_status);
  StatusCode code = StatusCode::kInternal;
  if (!value.is_discarded() && value.is_object() && value.contains("error") && value["error"].is_object()) {
    const Json& error = value["error"];
    if (error.contains("message") && error["message"].is_string()) message = error["message"].get<std::string>();
    std::string name = error.value("code", "");
    for (int c = 0; c <= static_cast<int>(StatusCode::kInternal); ++c) {
      if (name == StatusCodeName(static_cast<StatusCode>(c))) code = static_cast<StatusCode>(c);
    }
  } else {
    switch (http_status) {
      case 400: code = StatusCode::kInvalidArgument; break;
      case 401:
      case 403: code = StatusCode::kPermissionDenied; break;
      case 404: code = StatusCode::kNotFound; break;
      case 409: code = StatusCode::kFailedPrecondition; break;
      case 503: code = StatusCode::kUnavailable; break;
      default: break;
    }
  }
  if (code == StatusCode::kOk) code = StatusCode::kInternal;
  return Status(code, message);
}

}  // namespace shoal
