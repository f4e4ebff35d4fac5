#include "data/line_stream.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "storage/mem/mem_storage.h"

namespace shoal::data {
namespace {

std::string Collect(storage::Storage& s, const Shard& shard, int64_t chunk) {
  std::string out;
  EXPECT_TRUE(ReadShardLines(s, shard, [&](const char* d, size_t n) { out.append(d, n); return true; }, chunk).ok());
  return out;
}

TEST(LineStreamTest, EveryLineReachesExactlyOneShard) {
  auto& mem = storage::MemStorage::Shared();
  mem.CreateBucket("lines");
  const std::string text = "alpha\nb\n\nlonger line here\nx\nlast-without-newline";
  ASSERT_TRUE(mem.PutString("mem://lines/f", text).ok());
  const std::string expected = text + "\n";
  std::vector<storage::ObjectInfo> files{{"mem://lines/f", static_cast<int64_t>(text.size()), 0}};
  for (int n = 1; n <= static_cast<int>(text.size()) + 2; ++n) {
    for (int64_t chunk : {1, 3, 64}) {
      std::string all;
      for (const auto& share : SplitRanges(files, n)) {
        for (const auto& shard : share) all += Collect(mem, shard, chunk);
      }
      EXPECT_EQ(all, expected) << "tasks " << n << " chunk " << chunk;
    }
  }
}

// Streams the shards through a pipe, as the agent feeds a program's stdin.
std::string StreamThroughAPipe(const std::vector<Shard>& shards, const StreamOptions& options) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  std::thread writer([&] {
    EXPECT_TRUE(StreamShards(shards, options, fds[1]).ok());
    ::close(fds[1]);
  });
  std::string got;
  char buf[64];
  for (ssize_t r; (r = ::read(fds[0], buf, sizeof buf)) > 0;) got.append(buf, static_cast<size_t>(r));
  writer.join();
  ::close(fds[0]);
  return got;
}

TEST(LineStreamTest, EpochsAndShuffleThroughAPipe) {
  auto& mem = storage::MemStorage::Shared();
  mem.CreateBucket("epochs");
  std::vector<Shard> shards;
  for (int i = 0; i < 5; ++i) {
    std::string uri = "mem://epochs/f" + std::to_string(i);
    ASSERT_TRUE(mem.PutString(uri, std::to_string(i) + "\n").ok());
    shards.push_back({uri, 0, 2, 2});
  }
  const std::string got = StreamThroughAPipe(shards, StreamOptions{3, true, 42, nullptr});
  ASSERT_EQ(got.size(), 30u) << "3 epochs of 5 lines";
  std::vector<std::string> epochs;
  for (int e = 0; e < 3; ++e) {
    epochs.push_back(got.substr(static_cast<size_t>(e) * 10, 10));
    std::string sorted = epochs.back();
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, "\n\n\n\n\n01234") << "epoch " << e + 1 << " holds every line once: " << epochs.back();
  }
  EXPECT_FALSE(epochs[0] == epochs[1] && epochs[1] == epochs[2]) << "each epoch draws its own order: " << got;
  EXPECT_NE(got, "0\n1\n2\n3\n4\n0\n1\n2\n3\n4\n0\n1\n2\n3\n4\n") << "shuffled";
  EXPECT_EQ(StreamThroughAPipe(shards, StreamOptions{3, true, 42, nullptr}), got) << "the seed decides the order";
  EXPECT_EQ(StreamThroughAPipe(shards, StreamOptions{2, false, 42, nullptr}), "0\n1\n2\n3\n4\n0\n1\n2\n3\n4\n")
      << "without shuffle, in order";
}

}  // namespace
}  // namespace shoal::data
