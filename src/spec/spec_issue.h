// SpecIssue: one thing wrong with a job specification, and where it is.
//
// Contract:
//  - `field` is the dotted path of the offending field ("roles.worker.instances");
//    `problem` says what is wrong, `fix` what to do.
//  - SourceMap remembers the line each field came from (1-based) and which fields were
//    set by command-line flags, so every validator can point at the right place.
//  - FormatIssues renders "job.yaml:12: roles.worker.instances: must be at least 1 (got 0);
//    fix: ..." one issue per line, for a Status::InvalidArgument.
// Thread-safety: value types.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"

namespace shoal {

struct SpecIssue {
  std::string field;
  std::string problem;
  std::string fix;
};

class SourceMap {
 public:
  explicit SourceMap(std::string source_name = "job spec") : source_name_(std::move(source_name)) {}
  void SetLine(const std::string& field, int line) { lines_[field] = line; }
  // `typed`: the flag as the user gave it ("--instances worker=-1"); "" reads "--set FIELD".
  void MarkFromFlag(const std::string& field, const std::string& typed = "") {
    flags_[field] = typed.empty() ? "--set " + field : typed;
  }
  // "job.yaml:12", "flag --set roles.worker.instances" (or the flag as typed, "flag
  // --instances worker=-1") or "job.yaml" when the field has
  // no line of its own (a missing field: the line of its closest present parent, or the
  // flag that brought that parent in: a role only a flag names).
  std::string Locate(const std::string& field) const;
  const std::string& source_name() const { return source_name_; }

 private:
  std::string source_name_;
  std::map<std::string, int> lines_;
  std::map<std::string, std::string> flags_;  // field -> the flag that set it
};

// One InvalidArgument whose message lists every issue with its location.
Status FormatIssues(const std::vector<SpecIssue>& issues, const SourceMap& sources);

}  // namespace shoal
