// Localizer: puts what a job ships into a task's directory before its program starts:
// files are copied, archives unpacked into <task dir>/<name> (tar for .tar.gz/.tgz/.tar,
// unzip for .zip, chosen by content), and the archives' prepend lists are put in front
// of PATH, PYTHONPATH and LD_LIBRARY_PATH in the program's environment.
//
// Contract: the first failure is returned as a Status naming the file and the reason
// (the task then fails before its program starts). Runs the unpackers through the given
// ProcessLauncher. An archive is listed before it is unpacked and refused when a member
// is a link, a device or a FIFO, or would land outside its folder (spec/shipping.h, as at
// submit); after unpacking, a folder holding any of these (the archive changed between
// the listing and tar) is removed and the archive refused.
// Thread-safety: one caller.
#pragma once

#include <map>
#include <string>

#include "common/process.h"
#include "spec/job_spec.h"

namespace shoal {

// files: absolute paths; archives: the spec's, each unpacked into <task_dir>/<name>.
Status Localize(const std::vector<std::string>& files, const std::vector<ArchiveSpec>& archives,
                const std::string& task_dir, ProcessLauncher& processes, std::map<std::string, std::string>& env);

// The first entry under folder that is not a file or a folder (a symbolic link, a device,
// a FIFO, a socket) or is a file with other hard links, described ("the symbolic link
// 'lib/x'"); "" when there is none. Does not follow links.
std::string FirstUnsafeEntry(const std::string& folder);

}  // namespace shoal
