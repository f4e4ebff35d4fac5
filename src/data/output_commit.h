// Output commit: a task's local folder becomes a complete folder in storage, or nothing.
//
// Contract:
//  - CommitFolder(local, dest, tag) first removes dest/_SUCCESS (the folder is no longer
//    complete), uploads every file of `local` under dest/_temporary/<tag>/, then copies
//    each into place under dest/, writes dest/_SUCCESS (listing the files) and finally
//    removes the temporary copies. _SUCCESS is written last: a reader that sees it sees
//    the whole output; a task killed at any point before leaves no _SUCCESS, and one
//    killed during the upload leaves nothing outside _temporary.
//  - A missing local folder is committed as an empty output (just _SUCCESS).
//  - When *cancel becomes true (the job is being killed) no new file starts and the
//    commit ends kAborted before _SUCCESS, leaving the temporary copies.
//  - Errors name the file and the destination.
// Thread-safety: one commit per destination at a time.
#pragma once

#include <atomic>
#include <string>

#include "storage/storage.h"

namespace shoal::data {

inline constexpr const char* kSuccessMarker = "_SUCCESS";
inline constexpr const char* kTemporaryFolder = "_temporary";

// The files under a local folder, as paths relative to it, sorted.
Result<std::vector<std::string>> LocalFiles(const std::string& folder);

Status CommitFolder(const std::string& local_folder, const std::string& dest_uri, const std::string& tag,
                    int parallelism = 4, const std::atomic<bool>* cancel = nullptr);

}  // namespace shoal::data
