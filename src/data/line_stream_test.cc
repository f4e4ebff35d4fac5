#include "data/line_stream.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

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

TEST(LineStreamTest, EpochsAndShuffleThroughAPipe) {
  auto& mem = storage::MemStorage::Shared();
  mem.CreateBucket("epochs");
  std::vector<Shard> shards;
  for (int i = 0; i < 5; ++i) {
    std::string uri = "mem://epochs/f" + std::to_string(i);
    ASSERT_TRUE(mem.PutString(uri, std::to_string(i) + "\n").ok());
    shards.push_back({uri, 0, 2, 2});
  }
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  StreamOptions options{3, true, 42, nullptr};
  std::thread writer([&] {
    EXPECT_TRUE(StreamShards(shards, options, fds[1]).ok());
    ::close(fds[1]);
  });
  std::string got;
  char buf[64];
  for (ssize_t r; (r = ::read(fds[0], buf, sizeof buf)) > 0;) got.append(buf, static_cast<size_t>(r));
  writer.join();
  ::close(fds[0]);
  ASSERT_EQ(got.size(), 30u) << "3 epochs of 5 lines";
  std::string first = got.substr(0, 10), second = got.substr(10, 10);
  std::string sorted_first = first;
  std::sort(sorted_first.begin(), sorted_first.end());
  EXPECT_EQ(sorted_first, "\n\n\n\n\n01234");
  EXPECT_NE(got.substr(0, 10) + got.substr(10, 10) + got.substr(20, 10), "0\n1\n2\n3\n4\n0\n1\n2\n3\n4\n0\n1\n2\n3\n4\n")
      << "shuffled";
}

}  // namespace
}  // namespace shoal::data
