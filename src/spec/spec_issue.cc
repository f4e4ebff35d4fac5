#include "spec/spec_issue.h"

#include <string_view>

namespace shoal {

std::string SourceMap::Locate(const std::string& field) const {
  std::string path = field;
  while (true) {
    if (auto flag = flags_.find(path); flag != flags_.end()) return "flag " + flag->second;
    auto it = lines_.find(path);
    if (it != lines_.end()) return source_name_ + ":" + std::to_string(it->second);
    // Not in the file, but a flag set something below it (--role-env ghost:A=1 made the
    // role ghost): that flag brought it in.
    if (auto below = flags_.lower_bound(path + "."); below != flags_.end() && below->first.starts_with(path + ".")) {
      return "flag " + below->second;
    }
    // up one level: "files[0]" -> "files", "roles.worker.env" -> "roles.worker"
    size_t cut = path.back() == ']' ? path.rfind('[') : path.rfind('.');
    if (cut == std::string::npos || cut == 0) break;
    path.resize(cut);
  }
  return source_name_;
}

namespace {

// Length of the valid UTF-8 sequence at `at`, or 0.
size_t Utf8Length(std::string_view text, size_t at) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  unsigned char c = byte(at);
  size_t length = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
  if (length == 0 || at + length > text.size()) return 0;
  for (size_t i = 1; i < length; ++i) {
    if ((byte(at + i) >> 6) != 0x2) return 0;
  }
  return length;
}

// What a spec quoted back may hold: valid UTF-8 without control characters; anything
// else is shown as \xNN, so an error message never garbles a terminal or a log.
std::string Printable(std::string_view text) {
  std::string out;
  for (size_t at = 0; at < text.size();) {
    size_t length = Utf8Length(text, at);
    unsigned char c = static_cast<unsigned char>(text[at]);
    if (length == 0 || (length == 1 && (c < 0x20 || c == 0x7f) && c != '\n' && c != '\t')) {
      static const char* kHex = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
      ++at;
      continue;
    }
    out.append(text.substr(at, length));
    at += length;
  }
  return out;
}

}  // namespace

Status FormatIssues(const std::vector<SpecIssue>& issues, const SourceMap& sources) {
  if (issues.empty()) return Status::Ok();
  std::string message;
  for (const auto& issue : issues) {
    if (!message.empty()) message += "\n";
    message += Printable(sources.Locate(issue.field) + ": " + issue.field + ": " + issue.problem);
    if (!issue.fix.empty()) message += "; fix: " + Printable(issue.fix);
  }
  return InvalidArgument(message);
}

}  // namespace shoal
