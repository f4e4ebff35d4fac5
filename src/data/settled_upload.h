// UploadSettled: uploads one file of an output folder that a running program may be
// rewriting, so that what lands in storage is a state the file was in, never a tear.
//
// Contract:
//  - Before and after each copy the file is stat'ed (size, modification time, inode).
//    When they differ, the file changed while it was copied: it is copied again.
//  - With live (the program still runs: a saved model), an empty file modified less
//    than quiet_ms ago is taken as being rewritten (truncated, its contents not yet
//    written): it is looked at again every 100 ms, and copied once it has contents or
//    has stayed as it is for quiet_ms. One that is still being rewritten after
//    max_empty_wait_ms is kUnavailable naming it.
//  - A file that changed during its copy is copied again after 100 ms, doubling up to
//    1 s. After max_copies copies that did not settle, kUnavailable names the file and
//    the fix (write it under another name and rename it into place).
//  - Returns false when the file is gone (the program removed it, e.g. an old
//    checkpoint): nothing of it is to be committed. A copy's own error, on a file that
//    did not change, is returned as it is.
// Thread-safety: safe from several threads for different files.
#pragma once

#include <cstdint>
#include <string>

#include "common/clock.h"
#include "storage/storage.h"

namespace shoal::data {

struct SettleOptions {
  bool live = false;
  int max_copies = 8;
  int64_t quiet_ms = 1000;
  int64_t max_empty_wait_ms = 5000;
  const Clock* clock = nullptr;  // SystemClock when null; WallMillis is compared with mtimes
};

Result<bool> UploadSettled(storage::Storage& store, const std::string& local_path, const std::string& uri,
                           const SettleOptions& options);

}  // namespace shoal::data
