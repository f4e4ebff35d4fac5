// Fuzzes the server's users file (<home>/users.json, server/user_tokens.h): whatever the
// file holds, looking a token or a user's Unix account up neither crashes nor lets an
// empty or short token in.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "server/user_tokens.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/fuzz-users-" + std::to_string(getpid()) + ".json";
  FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) return 0;
  std::fwrite(data, 1, size, file);
  std::fclose(file);
  shoal::UserTokens users(path);  // a fresh table reads the file whole
  if (users.Find("")) std::abort();
  if (users.Find("short")) std::abort();
  (void)users.Find(std::string(64, 'a'));
  (void)users.UnixUserOf("ann");
  (void)users.UnixUserOf("");
  return 0;
}
