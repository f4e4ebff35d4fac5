#include "common/token_file.h"

#include <cstdlib>

#include "common/files.h"

namespace shoal {

std::string ReadTokenFile(const std::string& path) {
  auto text = ReadFile(path);
  if (!text.ok()) return "";
  std::string token = text->substr(0, text->find('\n'));
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ' || token.back() == '\t')) token.pop_back();
  return token;
}

std::string CallerToken(const std::string& home) {
  if (const char* token = std::getenv("SHOAL_TOKEN"); token && *token) return token;
  return ReadTokenFile(home + "/token");
}

}  // namespace shoal
