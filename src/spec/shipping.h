// Shipping checks: the files and archives a job ships must exist and archives must be
// archives, checked before the job is accepted (they are read again when each task starts).
//
// Contract: one issue for a workdir that is not a folder, one per missing or unreadable
// file, per archive that is neither gzip
// (tar.gz, tgz), tar nor zip by its first bytes, and per archive holding a member that
// must not be unpacked, named: one that would land outside the task's folder (an absolute
// path or a '..' component), or one that is not a file or a folder (a symbolic or hard
// link, a device, a FIFO). Archives are listed with `tar -tv` or `unzip -Z`; a listing
// that cannot be read whole refuses the archive. The agent's unpacker checks the same
// listing again before it unpacks (container/localizer.h).
// Thread-safety: reads the file system; no shared state.
#pragma once

#include <vector>

#include "common/process.h"
#include "spec/job_spec.h"
#include "spec/spec_issue.h"

namespace shoal {

enum class ArchiveFormat { kUnknown, kGzip, kTar, kZip };

// By content, not by name.
ArchiveFormat DetectArchiveFormat(const std::string& path);
std::vector<SpecIssue> CheckShippedFiles(const JobSpec& spec);

// Whether an archive member's path leaves the folder it is unpacked into.
bool EscapesFolder(const std::string& member);

// One member as the archive's own tool lists it: its path (for a link, with " -> target"
// or " link to target" after it) and its kind, the first letter of its mode as `ls -l`
// writes it: '-' a file, 'd' a folder, 'l' a symbolic link, 'h' a hard link, 'c' and 'b'
// devices, 'p' a FIFO.
struct ArchiveMember {
  std::string path;
  char kind = '-';
};

// `tar --numeric-owner -tvf` and `unzip -Z` output to members; an error names a line the
// listing does not explain (a tar line that is neither a member nor tar's own message, or
// a zip listing with fewer members than its header counts).
Result<std::vector<ArchiveMember>> ParseTarListing(const std::string& text);
Result<std::vector<ArchiveMember>> ParseZipListing(const std::string& text);
// Lists the archive with its tool through `processes`.
Result<std::vector<ArchiveMember>> ListArchive(const std::string& path, ArchiveFormat format, ProcessLauncher& processes);
// Why the first member that must not be unpacked must not ("holds the symbolic link
// 'lib/x -> /etc/passwd'"), or "" when every member may be.
std::string UnsafeMembers(const std::vector<ArchiveMember>& members);

}  // namespace shoal
