#include "common/secret.h"

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

}  // namespace shoal
