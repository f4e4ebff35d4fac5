// Shipping checks: the files and archives a job ships must exist and archives must be
// archives, checked before the job is accepted (they are read again when each task starts).
//
// Contract: one issue for a workdir that is not a folder, one per missing or unreadable
// file, per archive that is neither gzip
// (tar.gz, tgz), tar nor zip by its first bytes, and per archive holding a member that
// would unpack outside the task's folder (an absolute path or a '..' component; listed
// with `tar -t` or `unzip -Z1`).
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

// Whether an archive member's path leaves the folder it is unpacked into.
bool EscapesFolder(const std::string& member);

}  // namespace shoal
