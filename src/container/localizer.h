// Localizer: puts what a job ships into a task's directory before its program starts:
// files are copied, archives unpacked into <task dir>/<name> (tar for .tar.gz/.tgz/.tar,
// unzip for .zip, chosen by content), and the archives' prepend lists are put in front
// of PATH, PYTHONPATH and LD_LIBRARY_PATH in the program's environment.
//
// Contract: the first failure is returned as a Status naming the file and the reason
// (the task then fails before its program starts). Runs the unpackers through the given
// ProcessLauncher.
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

}  // namespace shoal
