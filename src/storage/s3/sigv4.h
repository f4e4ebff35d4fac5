// AWS Signature Version 4 for S3 requests (header-based, path-style).
//
// Contract: Sign adds x-amz-date, x-amz-content-sha256 (the hex SHA-256 of the body, or
// UNSIGNED-PAYLOAD when payload_hash says so), x-amz-security-token when the config has a
// session token, host, and Authorization to the request. The request's URL must already
// be encoded: the path with UriEncode(key, false) and the query string as built by
// CanonicalQuery (sorted, encoded), which is exactly what is signed.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "storage/s3/http_transport.h"
#include "storage/s3/s3_config.h"

namespace shoal::storage {

// RFC 3986 encoding as SigV4 wants it; "/" kept when encode_slash is false.
std::string UriEncode(const std::string& s, bool encode_slash);
// "a=1&b=x%2Fy", sorted by name, names and values encoded.
std::string CanonicalQuery(const std::map<std::string, std::string>& query);
std::string Sha256Hex(const std::string& data);
std::string HmacSha256(const std::string& key, const std::string& data);
// "20260101T000000Z" for a Unix time in milliseconds.
std::string AmzDate(int64_t wall_ms);

// Signs request in place. host is "host[:port]"; path the encoded path; query the
// canonical query string (may be empty).
void SignV4(HttpRequest& request, const S3Config& config, const std::string& host, const std::string& path,
            const std::string& query, const std::string& payload_hash, int64_t wall_ms);

}  // namespace shoal::storage
