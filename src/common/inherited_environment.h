// InheritedEnvironment: what of a process's environment Shoal passes down the chain
// server -> AM -> agent -> program. Nothing else is inherited: every variable a task's
// program sees beyond these comes from its launch plan (runtime/launch_plan.h), so no
// token, no password and no accident of the shell that started the server reaches a job.
//
// Contract (docs/environment.md lists the names):
//  - Kept: the user's session (PATH, HOME, USER, LOGNAME, SHELL, TERM, TMPDIR, TZ, LANG,
//    LANGUAGE, LC_*), the program's search paths (LD_LIBRARY_PATH, PYTHONPATH,
//    VIRTUAL_ENV), numeric libraries' and runtimes' tuning (OPENBLAS_*, OMP_*, MKL_*,
//    GLOO_*, NCCL_*, OMPI_*, PMIX_*, CUDA_*, NVIDIA_*), sanitizer options (ASAN_*, LSAN_*,
//    TSAN_*, UBSAN_*, MSAN_*), what a cluster sets for its step (SLURM_*), the storage
//    configuration Shoal itself reads (AWS_*, SHOAL_S3_*), SHOAL_TRAIN_BIN, and SHOAL_HOME
//    (which server's home a process belongs to: a path, no secret).
//  - Dropped: everything else, SHOAL_TOKEN and SHOAL_SERVER_TOKEN included.
// Thread-safety: a pure function.
#pragma once

#include <map>
#include <string>

namespace shoal {

bool IsInheritedVariable(const std::string& name);
std::map<std::string, std::string> InheritedEnvironment(const std::map<std::string, std::string>& from);

}  // namespace shoal
