// Reading a task's log file for the API: a chunk from an offset (followed live by the
// CLI and the page), the whole file (download) and a search.
//
// Contract:
//  - ReadLogChunk returns {text, offset, next_offset, size, path}; a log not written yet
//    reads as empty. Bytes are returned as they are (invalid UTF-8 is replaced when the
//    JSON is written).
//  - SearchLog returns {matches: [{line, text}], truncated, path}: the lines holding
//    `query` (case-insensitive, plain text, not a pattern), at most `max_matches`, each
//    cut to 2,000 characters; line numbers start at 1.
// Thread-safety: pure functions over files.
#pragma once

#include <cstdint>
#include <string>

#include "common/json.h"
#include "common/status.h"

namespace shoal {

Json ReadLogChunk(const std::string& path, int64_t offset, int64_t limit);
Result<Json> SearchLog(const std::string& path, const std::string& query, int max_matches);

}  // namespace shoal
