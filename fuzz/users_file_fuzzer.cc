// Fuzzes the server's users file (<home>/users.json, server/user_tokens.h): whatever the
// file holds, looking a token or a user's Unix account up neither crashes nor lets an
// empty or short token in.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "server/user_tokens.h"

namespace {

// This process's users file, under $TMPDIR, removed when the fuzzer exits.
struct ScratchFile {
  std::string path = std::filesystem::temp_directory_path() / ("fuzz-users-" + std::to_string(getpid()) + ".json");
  ~ScratchFile() { std::remove(path.c_str()); }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ScratchFile scratch;
  const std::string& path = scratch.path;
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
