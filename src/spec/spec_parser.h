// The job specification parser: YAML (or JSON, which YAML reads too) to a JobSpec.
//
// Contract:
//  - ParseJobSpec never throws and never crashes on any input; it reports every problem
//    it finds at once (unknown fields with a suggestion, wrong types, bad values, missing
//    commands), each with its line, as one InvalidArgument.
//  - Overrides ("roles.worker.instances=3", from `--set` and the named flags) are applied
//    to the document before it is read, so they are validated like the file; flags win.
//    "path=value" reads the value as YAML (3 is a number); "path:=value" takes it as text.
//  - Relative workdir values are resolved against `base_dir` (the spec file's folder).
//  - Framework-specific and capacity checks live elsewhere (runtime/, spec/fit.h); they
//    report through the returned SourceMap.
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "spec/job_spec.h"
#include "spec/spec_issue.h"

namespace shoal {

// The largest spec text a parse takes.
inline constexpr size_t kMaxSpecBytes = 8u << 20;
// The shortest timeouts.heartbeat: two of the agents' heartbeats (one a second).
inline constexpr int64_t kMinHeartbeatTimeoutMs = 2'000;
// The least memory a task may ask for: what its agent and the shell that starts the
// program use before the program itself runs (where a limit is enforced, as Slurm's
// cgroups do, less than this kills the task before its program starts).
inline constexpr int64_t kMinTaskMemoryBytes = 16ll << 20;
// The longest preemption_grace a spec may ask for (a server may allow less).
inline constexpr int64_t kMaxPreemptionGraceMs = 3'600'000;

struct ParsedSpec {
  JobSpec spec;
  SourceMap sources;
};

struct ParseOptions {
  std::string source_name = "job spec";       // shown in errors: the file name
  std::string base_dir = ".";                  // for a relative or missing workdir
  std::string default_name = "job";            // when the spec has no name
  std::vector<std::string> overrides;          // "path=value", applied in order
  // The flag each override came from, as the user typed it (path -> "--instances worker=2"),
  // for errors; an override without one is named "--set PATH".
  std::map<std::string, std::string> flag_names;
  std::vector<std::string> known_frameworks = {"generic", "pytorch"};
};

Result<ParsedSpec> ParseJobSpec(const std::string& text, const ParseOptions& options);

// Levenshtein distance, used to suggest "did you mean 'instances'?".
size_t EditDistance(const std::string& a, const std::string& b);

}  // namespace shoal
