// Shipping checks: the files and archives a job ships must exist and archives must be
// archives, checked before the job is accepted (they are read again when each task starts).
//
// Contract: one issue per missing or unreadable file, and per archive that is neither
// gzip (tar.gz, tgz), tar nor zip by its first bytes.
// Thread-safety: reads the file system; no shared state.
#pragma once

#include <vector>

#include "spec/job_spec.h"
#include "spec/spec_issue.h"

namespace shoal {

enum class ArchiveFormat { kUnknown, kGzip, kTar, kZip };

// By content, not by name.
ArchiveFormat DetectArchiveFormat(const std::string& path);
std::vector<SpecIssue> CheckShippedFiles(const JobSpec& spec);

}  // namespace shoal
