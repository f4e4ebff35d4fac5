// Splitting an input across tasks (docs/data.md).
//
// Contract:
//  - SplitWholeFiles gives every file to exactly one task, balancing total bytes (largest
//    file first to the least-loaded task); ties go to the lower task. Used by download
//    and placeholder modes, whose programs see whole files.
//  - SplitRanges cuts the concatenation of the files into n contiguous byte ranges of
//    nearly equal size (a file may be cut in pieces); stream mode then reads each range
//    on line boundaries (line_stream.h), so every line reaches exactly one task.
//  - Both return n lists (some may be empty when there are fewer bytes or files than
//    tasks); every byte of every file is in exactly one shard.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/json.h"
#include "storage/storage.h"

namespace shoal::data {

struct Shard {
  std::string uri;
  int64_t offset = 0;
  int64_t length = 0;     // bytes of the range
  int64_t file_size = 0;  // of the whole file
};

std::vector<std::vector<Shard>> SplitWholeFiles(const std::vector<storage::ObjectInfo>& files, int n);
std::vector<std::vector<Shard>> SplitRanges(const std::vector<storage::ObjectInfo>& files, int n);

Json ShardsToJson(const std::vector<Shard>& shards);
std::vector<Shard> ShardsFromJson(const Json& json);

}  // namespace shoal::data
