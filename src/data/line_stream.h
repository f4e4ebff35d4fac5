// Stream mode: feeding a task's share of an input into its program's stdin.
//
// Contract:
//  - A shard [offset, offset + length) of a file owns exactly the lines that start in it:
//    a shard that does not start the file skips the line in progress at offset, and
//    every shard finishes the line that crosses its end. With SplitRanges (split.h) every
//    line of the input reaches exactly one task. A last line without "\n" gets one.
//  - StreamShards writes the shards `epochs` times; with shuffle, each epoch visits the
//    shards in an order drawn from seed + epoch. It writes with blocking writes, so a slow
//    reader slows the feed through the pipe instead of filling memory (at most one
//    chunk is held). A reader that closes its end (EPIPE) ends the feed quietly.
//  - `stop` is polled between chunks; errors name the object.
// Thread-safety: one call per fd; the storage must be thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "data/split.h"
#include "storage/storage.h"

namespace shoal::data {

// Calls emit with consecutive pieces of the shard's lines (chunks of up to chunk_bytes).
// emit returns false to stop early.
Status ReadShardLines(storage::Storage& storage, const Shard& shard,
                      const std::function<bool(const char*, size_t)>& emit, int64_t chunk_bytes = 4 << 20);

struct StreamOptions {
  int epochs = 1;
  bool shuffle = false;
  uint64_t seed = 0;
  const std::atomic<bool>* stop = nullptr;
};

Status StreamShards(const std::vector<Shard>& shards, const StreamOptions& options, int fd);

}  // namespace shoal::data
