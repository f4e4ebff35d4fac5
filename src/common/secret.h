// Secrets: random tokens and their comparison.
//
// Contract:
//  - RandomToken(bytes) reads that many bytes from /dev/urandom and returns them as hex
//    (2 * bytes characters); an unreadable /dev/urandom is kUnavailable.
//  - HmacSha256Hex(key, message) is the HMAC-SHA256 of message under key, as hex: how the
//    server derives tokens scoped to one attempt from its own (server/server_auth.h).
//  - SecretEquals compares in time that depends only on the lengths, so a caller cannot
//    learn a secret one character at a time.
// Thread-safety: safe from any thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/status.h"

namespace shoal {

Result<std::string> RandomToken(size_t bytes = 32);
bool SecretEquals(std::string_view a, std::string_view b);
std::string HmacSha256Hex(std::string_view key, std::string_view message);

}  // namespace shoal
