#include "data/settled_upload.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

#include "storage/local_io.h"

namespace shoal::data {
namespace {

struct FileState {
  bool exists = false;
  int64_t size = 0;
  int64_t mtime_ns = 0;
  ino_t inode = 0;
  bool operator==(const FileState&) const = default;
};

Result<FileState> StateOf(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return FileState{};
    return storage::ErrnoStatus("cannot read", path, errno);
  }
  return FileState{true, static_cast<int64_t>(st.st_size),
                   static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec, st.st_ino};
}

}  // namespace

Result<bool> UploadSettled(storage::Storage& store, const std::string& local_path, const std::string& uri,
                           const SettleOptions& options) {
  const Clock& clock = options.clock ? *options.clock : SystemClock::Instance();
  constexpr int64_t kLookAgainMs = 100;
  int copies = 0;
  int64_t waited_while_empty = 0;
  int64_t wait_ms = kLookAgainMs;
  for (;;) {
    ASSIGN_OR_RETURN(FileState before, StateOf(local_path));
    if (!before.exists) return false;
    bool being_written = options.live && before.size == 0 &&
                         clock.WallMillis() - before.mtime_ns / 1'000'000 < options.quiet_ms;
    if (being_written) {
      if (waited_while_empty >= options.max_empty_wait_ms) {
        return Unavailable(local_path + " stayed empty while it was being written for " +
                           std::to_string(waited_while_empty) +
                           " ms: the program keeps truncating it; write it under another name and rename it into "
                           "place, so that every copy finds it whole");
      }
      clock.SleepForMillis(kLookAgainMs);
      waited_while_empty += kLookAgainMs;
      continue;
    }
    Status copied = store.PutFromFile(local_path, uri);
    ++copies;
    ASSIGN_OR_RETURN(FileState after, StateOf(local_path));
    if (!after.exists) return false;
    if (after == before) {
      if (!copied.ok()) return copied;
      return true;
    }
    if (copies >= options.max_copies) {
      return Unavailable(local_path + " kept changing through " + std::to_string(copies) +
                         " copies: the program is rewriting it; write it under another name and rename it into "
                         "place, so that every copy finds it whole");
    }
    clock.SleepForMillis(wait_ms);
    wait_ms = std::min<int64_t>(wait_ms * 2, 1000);
  }
}

}  // namespace shoal::data
