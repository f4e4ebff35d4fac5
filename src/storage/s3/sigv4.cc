#include "storage/s3/sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <vector>

namespace shoal::storage {
namespace {

std::string Hex(const unsigned char* data, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (size_t i = 0; i < n; ++i) {
    out.push_back(digits[data[i] >> 4]);
    out.push_back(digits[data[i] & 15]);
  }
  return out;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

std::string UriEncode(const std::string& s, bool encode_slash) {
  static const char* digits = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (c == '/' && !encode_slash)) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(digits[c >> 4]);
      out.push_back(digits[c & 15]);
    }
  }
  return out;
}

std::string CanonicalQuery(const std::map<std::string, std::string>& query) {
  std::vector<std::pair<std::string, std::string>> encoded;
  for (const auto& [k, v] : query) encoded.emplace_back(UriEncode(k, true), UriEncode(v, true));
  std::sort(encoded.begin(), encoded.end());
  std::string out;
  for (const auto& [k, v] : encoded) {
    if (!out.empty()) out += '&';
    out += k + "=" + v;
  }
  return out;
}

std::string Sha256Hex(const std::string& data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  return Hex(digest, sizeof(digest));
}

std::string HmacSha256(const std::string& key, const std::string& data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
       data.size(), digest, &len);
  return std::string(reinterpret_cast<char*>(digest), len);
}

std::string AmzDate(int64_t wall_ms) {
  std::time_t t = static_cast<std::time_t>(wall_ms / 1000);
  std::tm tm;
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

void SignV4(HttpRequest& request, const S3Config& config, const std::string& host, const std::string& path,
            const std::string& query, const std::string& payload_hash, int64_t wall_ms) {
  std::string amz_date = AmzDate(wall_ms);
  std::string date = amz_date.substr(0, 8);
  request.headers.emplace_back("x-amz-date", amz_date);
  request.headers.emplace_back("x-amz-content-sha256", payload_hash);
  if (!config.session_token.empty()) request.headers.emplace_back("x-amz-security-token", config.session_token);

  std::vector<std::pair<std::string, std::string>> signed_headers{{"host", host}};
  for (const auto& [name, value] : request.headers) signed_headers.emplace_back(Lower(name), value);
  std::sort(signed_headers.begin(), signed_headers.end());
  std::string canonical_headers, signed_names;
  for (const auto& [name, value] : signed_headers) {
    canonical_headers += name + ":" + value + "\n";
    if (!signed_names.empty()) signed_names += ';';
    signed_names += name;
  }
  std::string canonical_request = request.method + "\n" + path + "\n" + query + "\n" + canonical_headers + "\n" +
                                  signed_names + "\n" + payload_hash;
  std::string scope = date + "/" + config.region + "/s3/aws4_request";
  std::string to_sign = "AWS4-HMAC-SHA256\n" + amz_date + "\n" + scope + "\n" + Sha256Hex(canonical_request);
  std::string key = HmacSha256("AWS4" + config.secret_key, date);
  key = HmacSha256(key, config.region);
  key = HmacSha256(key, "s3");
  key = HmacSha256(key, "aws4_request");
  std::string signature = HmacSha256(key, to_sign);
  request.headers.emplace_back("Authorization", "AWS4-HMAC-SHA256 Credential=" + config.access_key + "/" + scope +
                                                    ", SignedHeaders=" + signed_names +
                                                    ", Signature=" +
                                                    Hex(reinterpret_cast<const unsigned char*>(signature.data()),
                                                        signature.size()));
}

}  // namespace shoal::storage
