// Where `shoal train` reads its inputs and writes its models: local paths, file:// URIs and
// every scheme of Shoal's storage (src/storage: s3://, ...).
//
// Contract:
//  - LocalPath("file:///a/b"), LocalPath("file:/a/b") and LocalPath("file://localhost/a/b")
//    are "/a/b"; a plain path is returned as it is.
//  - CheckUri refuses a URI with an unknown scheme, a relative file: URI ("file:a/b") and a
//    file:// URI naming another host (kInvalidArgument naming it and the fix). Every
//    function that reads or writes checks its URI first.
//  - LocalCopy returns a local path for a URI: the path itself for local ones; for remote
//    ones the object (or every object under the prefix: an LMDB folder) is downloaded
//    once into a cache: $SHOAL_TASK_DIR/train-cache in a task; outside one, a folder of
//    the process's own (mkdtemp under $TMPDIR, mode 0700), removed when it exits.
//  - WriteFileAtomic: readers see the old object or the new one, never half of one (local:
//    "<path>.tmp.<pid>" renamed over the path, parent folders created; remote: one put).
// Thread-safety: functions over the file system and the storage, safe from any thread.
#pragma once

#include <string>

#include "common/status.h"

namespace shoal::train {

std::string LocalPath(const std::string& uri);
// What to show or record for a URI: a local one as its path, any other as it is.
std::string PlainUri(const std::string& uri);
bool IsLocal(const std::string& uri);
Status CheckUri(const std::string& uri, const std::string& what);
Result<std::string> LocalCopy(const std::string& uri);
Result<std::string> ReadFileBytes(const std::string& uri);
Status WriteFileAtomic(const std::string& uri, const std::string& data);
// The directory part of a URI ("" for a bare file name) and a sibling of it.
std::string UriDir(const std::string& uri);
std::string UriJoin(const std::string& dir, const std::string& name);

}  // namespace shoal::train
