#include "data/line_stream.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <numeric>
#include <random>

namespace shoal::data {

Status ReadShardLines(storage::Storage& storage, const Shard& shard,
                      const std::function<bool(const char*, size_t)>& emit, int64_t chunk_bytes) {
  const int64_t end = shard.offset + shard.length;  // lines starting before end are ours
  int64_t pos = shard.offset;                       // next byte to read
  bool skipping = false;
  if (shard.offset > 0) {  // skip the line in progress, unless one ends right before offset
    pos = shard.offset - 1;
    skipping = true;
  }
  char last = '\n';
  while (pos < shard.file_size) {
    ASSIGN_OR_RETURN(std::string chunk, storage.ReadRange(shard.uri, pos, std::min(chunk_bytes, shard.file_size - pos)));
    if (chunk.empty()) break;
    size_t from = 0;
    if (skipping) {
      size_t nl = chunk.find('\n');
      if (nl == std::string::npos) {
        pos += static_cast<int64_t>(chunk.size());
        continue;
      }
      skipping = false;
      from = nl + 1;
    }
    // Emit up to the end of the line that starts at or crosses `end`.
    int64_t chunk_start = pos;
    size_t upto = chunk.size();
    bool done = false;
    int64_t first_abs = chunk_start + static_cast<int64_t>(from);
    if (first_abs >= end && last == '\n') {
      break;  // the next line starts at or after end: not ours
    }
    if (chunk_start + static_cast<int64_t>(chunk.size()) > end) {
      // Find the first '\n' at or after end - 1 (the line crossing end finishes there).
      size_t search = static_cast<size_t>(std::max<int64_t>(end - 1 - chunk_start, static_cast<int64_t>(from)));
      size_t nl = chunk.find('\n', search);
      if (nl != std::string::npos) {
        upto = nl + 1;
        done = true;
      }
    }
    if (upto > from) {
      last = chunk[upto - 1];
      if (!emit(chunk.data() + from, upto - from)) return Status::Ok();
    }
    if (done) return Status::Ok();
    pos += static_cast<int64_t>(chunk.size());
  }
  if (last != '\n' && !skipping) emit("\n", 1);
  return Status::Ok();
}

Status StreamShards(const std::vector<Shard>& shards, const StreamOptions& options, int fd) {
  std::vector<size_t> order(shards.size());
  std::iota(order.begin(), order.end(), 0);
  bool closed = false;
  Status error;
  auto emit = [&](const char* data, size_t n) {
    if (options.stop && options.stop->load()) return false;
    while (n > 0) {
      ssize_t w = ::write(fd, data, n);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        if (errno == EPIPE) closed = true;
        else error = Unavailable(std::string("cannot write to the program's stdin: ") + std::strerror(errno));
        return false;
      }
      data += w;
      n -= static_cast<size_t>(w);
    }
    return true;
  };
  for (int epoch = 0; epoch < options.epochs; ++epoch) {
    if (options.shuffle) {
      std::mt19937_64 gen(options.seed + static_cast<uint64_t>(epoch));
      std::shuffle(order.begin(), order.end(), gen);
    }
    for (size_t i : order) {
      ASSIGN_OR_RETURN(std::shared_ptr<storage::Storage> storage, storage::OpenStorage(shards[i].uri));
      Status s = ReadShardLines(*storage, shards[i], emit);
      if (!s.ok()) return s.WithContext("stream of " + shards[i].uri);
      if (!error.ok()) return error;
      if (closed || (options.stop && options.stop->load())) return Status::Ok();
    }
  }
  return Status::Ok();
}

}  // namespace shoal::data
