// Local names: where each object of a listed folder lands on a local disk, when Shoal
// copies a folder of objects to a task's folder (a `download` input, data/task_data.h) or
// to the trainer's cache (train/uri.h).
//
// Contract:
//  - LocalName(uri, base) is the object's URI past `base` (the folder or the glob's fixed
//    part), its folders kept: "s3://b/in/a/x.csv" under "s3://b/in/" lands at "a/x.csv".
//    A name that is not a relative path a file system can hold is kInvalidArgument naming
//    the object and the fix: an object outside `base`, an empty name, a part that is
//    empty ("a//x", a key ending "/"), "." or "..", or longer than 255 bytes. Object
//    stores take such keys; the copy would land elsewhere than the name says (".." climbs
//    out of the folder) or not at all.
//  - CheckLocalNames is LocalName for every object of a listing, plus the one clash a
//    store allows and a disk does not: an object whose name is a folder of another's
//    ("a" beside "a/x.csv"). It returns the first problem, with the count of others.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "storage/storage.h"

namespace shoal::storage {

Result<std::string> LocalName(const std::string& uri, const std::string& base);
Status CheckLocalNames(const std::vector<ObjectInfo>& objects, const std::string& base);

}  // namespace shoal::storage
