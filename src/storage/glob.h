// Glob matching for input URIs: "*" and "?" match within one path segment (not "/"),
// "**" matches across segments, "[abc]" / "[a-z]" / "[!a]" match one character.
// Thread-safety: pure functions.
#pragma once

#include <string>

namespace shoal::storage {

bool GlobMatch(const std::string& pattern, const std::string& text);
// The longest prefix of pattern before the segment that holds its first glob character
// (ends with "/" or is empty).
std::string GlobPrefix(const std::string& pattern);

}  // namespace shoal::storage
