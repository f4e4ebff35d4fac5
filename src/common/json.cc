#include "common/json.h"

namespace shoal {

Result<Json> ParseJson(const std::string& text, const std::string& what) {
  Json value = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return InvalidArgument(what + " is not valid JSON");
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
