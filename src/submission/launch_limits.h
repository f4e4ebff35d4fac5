// Launch limits: what one exec may carry, so that a command or an environment too large
// for the kernel is refused at submit instead of failing every task at its start with
// "Argument list too long" (E2BIG).
//
// Contract: CheckLaunchLimits returns one issue per command (a role's, the board's) or
// variable ("NAME=value") longer than one argument may be, and one per role whose
// command and variables together pass the total; each names the limit. Shoal's own
// variables and wrappers (the cluster description, mpirun's prefix) get kShoalReserve
// of the total and kShoalWrapperBytes of the command's argument.
// Thread-safety: pure functions; ArgumentLimits::OfThisMachine reads sysconf.
#pragma once

#include <cstddef>
#include <vector>

#include "spec/job_spec.h"
#include "spec/spec_issue.h"

namespace shoal {

struct ArgumentLimits {
  size_t max_argument_bytes = 131072;  // one argument or variable, its NUL included (MAX_ARG_STRLEN)
  size_t max_total_bytes = 2097152;    // all arguments and variables with their pointers (ARG_MAX)

  // 32 pages for one argument, sysconf(_SC_ARG_MAX) (a quarter of the stack limit) in all.
  static ArgumentLimits OfThisMachine();
};

inline constexpr size_t kShoalReserveBytes = 64 << 10;
inline constexpr size_t kShoalWrapperBytes = 1 << 10;

std::vector<SpecIssue> CheckLaunchLimits(const JobSpec& spec, const ArgumentLimits& limits);

}  // namespace shoal
