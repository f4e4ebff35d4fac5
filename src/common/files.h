// Files: small file-system helpers shared by the components.
// Contract: errors name the path and the reason; writes that others read are atomic
// (a temporary file renamed into place). Thread-safety: pure functions over the FS.
#pragma once

#include <string>

#include "common/status.h"

namespace shoal {

Result<std::string> ReadFile(const std::string& path);
// The file's text when it is at most `max_bytes` (reading no more than one byte past it,
// so a device such as /dev/zero ends too): FailedPrecondition for a folder or a larger
// file, NotFound when it cannot be read.
Result<std::string> ReadFileUpTo(const std::string& path, size_t max_bytes);
// The last `max_bytes` of a file (all of it when shorter).
Result<std::string> ReadFileTail(const std::string& path, size_t max_bytes);
// Writes to path.tmp-<pid> and renames over path.
Status WriteFileAtomic(const std::string& path, const std::string& content);
// The same for a secret: the file is created with mode 0600 and never readable by others.
Status WriteSecretFileAtomic(const std::string& path, const std::string& content);
// mkdir -p.
Status MakeDirectories(const std::string& path);
// A new folder of the caller's own (mkdtemp: mode 0700, a name nobody had) from
// `pattern`, a path ending in XXXXXX; its path, or Unavailable naming the pattern, what the
// folder was for (`purpose`) and the reason.
Result<std::string> MakePrivateFolder(const std::string& pattern, const std::string& purpose);
// The directory part of a path ("." for a bare name).
std::string DirName(const std::string& path);
// An absolute form of path (relative paths are resolved against the current directory).
std::string AbsolutePath(const std::string& path);

}  // namespace shoal
