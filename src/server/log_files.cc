#include "server/log_files.h"

#include <algorithm>
#include <cctype>
#include <fstream>

namespace shoal {

Json ReadLogChunk(const std::string& path, int64_t offset, int64_t limit) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return Json{{"text", ""}, {"offset", offset}, {"next_offset", offset}, {"size", 0}, {"path", path}};
  file.seekg(0, std::ios::end);
  int64_t size = file.tellg();
  offset = std::min(offset, size);
  file.seekg(offset);
  std::string text(static_cast<size_t>(std::min<int64_t>(limit, size - offset)), '\0');
  file.read(text.data(), static_cast<std::streamsize>(text.size()));
  return Json{{"text", text}, {"offset", offset}, {"next_offset", offset + static_cast<int64_t>(text.size())},
              {"size", size}, {"path", path}};
}

Result<Json> SearchLog(const std::string& path, const std::string& query, int max_matches) {
  if (query.empty()) return InvalidArgument("the search needs a non-empty \"q\"");
  if (query.size() > 1000) return InvalidArgument("the search text is longer than 1000 characters");
  auto lower = [](std::string text) {
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
    return text;
  };
  const std::string needle = lower(query);
  Json matches = Json::array();
  bool truncated = false;
  std::ifstream file(path, std::ios::binary);
  std::string line;
  for (int64_t number = 1; file && std::getline(file, line); ++number) {
    if (lower(line).find(needle) == std::string::npos) continue;
    if (static_cast<int>(matches.size()) == max_matches) {
      truncated = true;
      break;
    }
    matches.push_back(Json{{"line", number}, {"text", line.substr(0, 2000)}});
  }
  return Json{{"matches", matches}, {"truncated", truncated}, {"path", path}};
}

}  // namespace shoal
