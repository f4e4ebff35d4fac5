// Json: Shoal's one JSON type (nlohmann::json) and the few helpers shared by every
// component that speaks the HTTP/JSON control plane.
// Thread-safety: values; no shared state.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"

namespace shoal {

using Json = nlohmann::json;

// Arrays and objects nest at most this deep in JSON that ParseJson accepts: far more than
// any of Shoal's documents, and shallow enough for nlohmann's recursive copy and dump.
inline constexpr int kMaxJsonDepth = 64;

// Parses text as JSON; a parse error, nesting deeper than kMaxJsonDepth, or a key given
// twice in one object is InvalidArgument naming `what` (and the key).
Result<Json> ParseJson(const std::string& text, const std::string& what);

// The body of an error reply: {"error": {"code": "...", "message": "..."}}.
Json ErrorBody(const Status& status);
// Reads an error reply back into a Status (kInternal when the body is not one).
Status StatusFromErrorBody(int http_status, const std::string& body);
// The HTTP status for a Status code (400, 404, 409, 413, 503, 504, 500).
int HttpStatusFor(StatusCode code);

}  // namespace shoal
