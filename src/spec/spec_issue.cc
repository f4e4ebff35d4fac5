#include "spec/spec_issue.h"

namespace shoal {

std::string SourceMap::Locate(const std::string& field) const {
  std::string path = field;
  while (true) {
    if (flags_.count(path)) return "flag --set " + path;
    auto it = lines_.find(path);
    if (it != lines_.end()) return source_name_ + ":" + std::to_string(it->second);
    size_t dot = path.rfind('.');
    if (dot == std::string::npos) break;
    path.resize(dot);
  }
  return source_name_;
}

Status FormatIssues(const std::vector<SpecIssue>& issues, const SourceMap& sources) {
  if (issues.empty()) return Status::Ok();
  std::string message;
  for (const auto& issue : issues) {
    if (!message.empty()) message += "\n";
    message += sources.Locate(issue.field) + ": " + issue.field + ": " + issue.problem;
    if (!issue.fix.empty()) message += "; fix: " + issue.fix;
  }
  return InvalidArgument(message);
}

}  // namespace shoal
