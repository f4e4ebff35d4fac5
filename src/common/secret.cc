#include "common/secret.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

namespace shoal {

Result<std::string> RandomToken(size_t bytes) {
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Unavailable("cannot open /dev/urandom to make a secret token");
  std::string raw(bytes, '\0');
  ssize_t got = read(fd, raw.data(), raw.size());
  close(fd);
  if (got != static_cast<ssize_t>(raw.size())) return Unavailable("cannot read /dev/urandom to make a secret token");
  std::string hex;
  for (unsigned char c : raw) {
    char pair[3];
    std::snprintf(pair, sizeof pair, "%02x", c);
    hex += pair;
  }
  return hex;
}

bool SecretEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

std::string HmacSha256Hex(std::string_view key, std::string_view message) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(message.data()),
       message.size(), digest, &length);
  static const char* kHex = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex.push_back(kHex[digest[i] >> 4]);
    hex.push_back(kHex[digest[i] & 15]);
  }
  return hex;
}

}  // namespace shoal
