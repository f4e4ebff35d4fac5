// RunParallel: a small fork-join for independent pieces of one transfer (the parts of an
// object, the files of an output).
// Contract: runs work(0..n-1) on up to `parallelism` threads (the caller's among them);
// the first error is returned and no new item starts after it; returns when every
// started item has finished.
// Thread-safety: work must be safe to call from several threads at once.
#pragma once

#include <functional>

#include "common/status.h"

namespace shoal::storage {

Status RunParallel(int n, int parallelism, const std::function<Status(int)>& work);

}  // namespace shoal::storage
