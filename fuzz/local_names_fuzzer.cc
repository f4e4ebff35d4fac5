// Fuzzes the local names of listed objects (storage/local_names.h): the keys are whatever
// a bucket holds, and a name that passes must stay inside its folder on every disk. The
// input's first line is the base, every other line an object's URI.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "storage/local_names.h"

namespace {

bool HoldableName(const std::string& name) {
  if (name.empty()) return false;
  size_t start = 0;
  for (;;) {
    size_t slash = name.find('/', start);
    std::string part = name.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (part.empty() || part == "." || part == ".." || part.size() > 255) return false;
    if (slash == std::string::npos) return true;
    start = slash + 1;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> lines;
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  const std::string& base = lines.front();
  std::vector<shoal::storage::ObjectInfo> objects;
  std::vector<std::string> names;
  bool all_named = true;
  for (size_t i = 1; i < lines.size() && i <= 64; ++i) {
    objects.push_back({lines[i], 0, 0});
    auto name = shoal::storage::LocalName(lines[i], base);
    if (!name.ok()) {
      all_named = false;
      continue;
    }
    // A name that passes is a relative path inside the folder, and is the URI past the base.
    if (!HoldableName(*name) || lines[i] != base + *name) std::abort();
    names.push_back(*name);
  }
  bool clash = false;
  for (const std::string& a : names) {
    for (const std::string& b : names) clash = clash || b.starts_with(a + "/");
  }
  if (shoal::storage::CheckLocalNames(objects, base).ok() != (all_named && !clash)) std::abort();
  return 0;
}
