#include "common/inherited_environment.h"

#include <array>
#include <string_view>

namespace shoal {
namespace {

constexpr std::array<std::string_view, 15> kNames{
    "PATH",     "HOME",       "USER",        "LOGNAME",         "SHELL",      "TERM",        "TMPDIR",    "TZ",
    "LANG",     "LANGUAGE",   "LD_LIBRARY_PATH", "PYTHONPATH",  "VIRTUAL_ENV", "SHOAL_TRAIN_BIN", "SHOAL_HOME"};
constexpr std::array<std::string_view, 19> kPrefixes{"LC_",   "OPENBLAS_", "OMP_",  "MKL_",  "GLOO_",    "NCCL_",    "OMPI_",
                                                     "PMIX_", "CUDA_",     "NVIDIA_", "ASAN_", "LSAN_",  "TSAN_",    "UBSAN_",
                                                     "MSAN_", "SLURM_",    "AWS_",  "SHOAL_S3_", "SLURMD_"};

}  // namespace

bool IsInheritedVariable(const std::string& name) {
  for (std::string_view exact : kNames) {
    if (name == exact) return true;
  }
  for (std::string_view prefix : kPrefixes) {
    if (name.starts_with(prefix)) return true;
  }
  return false;
}

std::map<std::string, std::string> InheritedEnvironment(const std::map<std::string, std::string>& from) {
  std::map<std::string, std::string> kept;
  for (const auto& [name, value] : from) {
    if (IsInheritedVariable(name)) kept[name] = value;
  }
  return kept;
}

}  // namespace shoal
