// Output commit: a task's local folder becomes a complete folder in storage, or nothing.
//
// The destination is the folder dest (every object whose key starts with "dest/"), less
// two things it may hold that are not this commit's: dest/_temporary/ (the commits'
// scratch space) and the saved models' folders dest/saved-YYYYMMDD-HHMMSS[-N]/ (with
// `from`, a saved model goes under the output's URI itself). On a file system, a
// symlinked folder in it is left as it is: nothing is deleted through a link.
//
// Contract:
//  - CommitFolder(local, dest, tag) first reads what earlier commits put in dest (the
//    files dest/_SUCCESS lists, and those listed by commits stopped before their
//    _SUCCESS, in dest/_temporary/committing-<tag>), removes dest/_SUCCESS (the folder is
//    no longer complete), uploads every file of `local` under dest/_temporary/<tag>/ (each
//    settled: data/settled_upload.h), writes its own listing to
//    dest/_temporary/committing-<tag>, copies each file into place under dest/, deletes
//    the earlier commits' files it does not commit again (an earlier attempt's stale
//    files), writes dest/_SUCCESS (listing the files) and finally deletes
//    dest/_temporary/ with everything in it: its own copies, those an earlier attempt
//    killed mid-upload left, and their unfinished multipart uploads. Afterwards the
//    destination holds exactly the committed files of Shoal's commits; objects no commit
//    of Shoal's put there (the user's own) are never deleted.
//    _SUCCESS is written last: a reader that sees it sees the whole output; a task killed
//    at any point before leaves no _SUCCESS, and one killed during the upload leaves
//    nothing outside _temporary (which the next commit into dest sweeps).
//  - A missing local folder is committed as an empty output (just _SUCCESS). A file the
//    program removes before it is copied is left out.
//  - A commit that fails or is cancelled (*cancel becomes true: the task is being
//    stopped; no new file starts) deletes its own temporary copies before it returns;
//    it ends before _SUCCESS (kAborted when cancelled).
//  - Errors name the file and the destination.
// Thread-safety: one commit per destination at a time.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "data/settled_upload.h"
#include "storage/storage.h"

namespace shoal::data {

inline constexpr const char* kSuccessMarker = "_SUCCESS";
inline constexpr const char* kTemporaryFolder = "_temporary";

struct CommitOptions {
  int parallelism = 4;
  const std::atomic<bool>* cancel = nullptr;
  SettleOptions settle;  // settle.live for a saved model: the program still runs
};

// The files under a local folder, as paths relative to it, sorted.
Result<std::vector<std::string>> LocalFiles(const std::string& folder);

// True for "saved-YYYYMMDD-HHMMSS" and "saved-YYYYMMDD-HHMMSS-N": a saved model's folder.
bool IsSavedModelFolder(const std::string& name);

Status CommitFolder(const std::string& local_folder, const std::string& dest_uri, const std::string& tag,
                    const CommitOptions& options = {});

}  // namespace shoal::data
