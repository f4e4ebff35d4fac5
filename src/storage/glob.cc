#include "storage/glob.h"

namespace shoal::storage {
namespace {

// Matches a bracket class at p[i] (p[i] == '['); sets next to the index after ']'.
bool MatchClass(const std::string& p, size_t i, char c, size_t& next) {
  size_t j = i + 1;
  bool negate = j < p.size() && (p[j] == '!' || p[j] == '^');
  if (negate) ++j;
  bool matched = false;
  bool first = true;
  for (; j < p.size() && (first || p[j] != ']'); ++j, first = false) {
    if (j + 2 < p.size() && p[j + 1] == '-' && p[j + 2] != ']') {
      if (c >= p[j] && c <= p[j + 2]) matched = true;
      j += 2;
    } else if (p[j] == c) {
      matched = true;
    }
  }
  if (j >= p.size()) {  // no closing bracket: a literal '['
    next = i + 1;
    return c == '[';
  }
  next = j + 1;
  return matched != negate;
}

bool Match(const std::string& p, size_t pi, const std::string& t, size_t ti) {
  while (pi < p.size()) {
    char pc = p[pi];
    if (pc == '*') {
      bool deep = pi + 1 < p.size() && p[pi + 1] == '*';
      size_t rest = pi + (deep ? 2 : 1);
      for (size_t k = ti;; ++k) {
        if (Match(p, rest, t, k)) return true;
        if (k >= t.size() || (!deep && t[k] == '/')) return false;
      }
    }
    if (ti >= t.size()) return false;
    if (pc == '?') {
      if (t[ti] == '/') return false;
      ++pi;
    } else if (pc == '[') {
      size_t next;
      if (t[ti] == '/' || !MatchClass(p, pi, t[ti], next)) return false;
      pi = next;
    } else {
      if (pc != t[ti]) return false;
      ++pi;
    }
    ++ti;
  }
  return ti == t.size();
}

}  // namespace

bool GlobMatch(const std::string& pattern, const std::string& text) { return Match(pattern, 0, text, 0); }

std::string GlobPrefix(const std::string& pattern) {
  size_t first = pattern.find_first_of("*?[");
  if (first == std::string::npos) return pattern;
  size_t slash = pattern.rfind('/', first);
  return slash == std::string::npos ? "" : pattern.substr(0, slash + 1);
}

}  // namespace shoal::storage
