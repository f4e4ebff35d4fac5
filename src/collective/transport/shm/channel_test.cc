// Unit tests of shm::Channel: byte order across the ring's wrap, partial writes and
// reads, and the asleep flags that keep a wake-up from being lost.
#include "collective/transport/shm/channel.h"

#include <gtest/gtest.h>

#include <numeric>
#include <thread>
#include <vector>

namespace shoal::collective::transport::shm {
namespace {

struct Ring {
  explicit Ring(size_t capacity) : data(capacity) {}
  Channel channel() { return Channel(&header, data.data(), data.size()); }
  ChannelHeader header{};
  std::vector<char> data;
};

TEST(ChannelTest, BytesArriveInOrderAcrossTheWrap) {
  Ring ring(64);
  Channel c = ring.channel();
  std::vector<char> in(1000), out(1000);
  std::iota(in.begin(), in.end(), 0);
  size_t written = 0, read = 0;
  for (size_t step = 7; read < in.size(); step = step * 5 % 97 + 1) {
    written += c.Write(in.data() + written, std::min(step, in.size() - written));
    read += c.Read(out.data() + read, std::min(step + 3, written - read + 1));
  }
  EXPECT_EQ(in, out);
}

TEST(ChannelTest, WritesWhatFitsAndReadsWhatIsThere) {
  Ring ring(16);
  Channel c = ring.channel();
  char buf[32] = "abcdefghijklmnopqrstuvwxyz";
  EXPECT_EQ(c.Write(buf, 20), 16u);  // full
  EXPECT_EQ(c.Write(buf, 1), 0u);
  char out[32] = {};
  EXPECT_EQ(c.Read(out, 10), 10u);
  EXPECT_EQ(std::string(out, 10), "abcdefghij");
  EXPECT_EQ(c.Read(out, 10), 6u);
  EXPECT_EQ(c.Read(out, 10), 0u);  // empty
}

TEST(ChannelTest, SleepersAreWokenExactlyWhenTheyMayBeAsleep) {
  Ring ring(8);
  Channel c = ring.channel();
  EXPECT_FALSE(c.TakeReaderAsleep());  // nobody asked
  EXPECT_TRUE(c.ArmReader());          // empty: the reader may sleep
  char x[8] = {};
  ASSERT_EQ(c.Write(x, 8), 8u);
  EXPECT_TRUE(c.TakeReaderAsleep());   // the writer must wake it...
  EXPECT_FALSE(c.TakeReaderAsleep());  // ...once
  EXPECT_FALSE(c.ArmReader());         // data is there: do not sleep
  EXPECT_TRUE(c.ArmWriter());          // full: the writer may sleep
  ASSERT_EQ(c.Read(x, 1), 1u);
  EXPECT_TRUE(c.TakeWriterAsleep());
  EXPECT_FALSE(c.ArmWriter());  // space now
}

// Two threads stream 64 MiB through a small ring, sleeping (here: yielding) only
// after arming; every byte arrives in order.
TEST(ChannelTest, StreamsBetweenTwoThreads) {
  Ring ring(4096);
  Channel c = ring.channel();
  const size_t total = 64 << 20;
  std::thread writer([&] {
    std::vector<char> chunk(1500);
    size_t sent = 0;
    while (sent < total) {
      for (size_t i = 0; i < chunk.size(); ++i) chunk[i] = static_cast<char>((sent + i) * 131 >> 3);
      size_t want = std::min(chunk.size(), total - sent), done = 0;
      while (done < want) {
        size_t n = c.Write(chunk.data() + done, want - done);
        done += n;
        if (n == 0 && c.ArmWriter()) std::this_thread::yield();
      }
      sent += want;
    }
  });
  std::vector<char> buf(999);
  size_t got = 0, bad = 0;
  while (got < total) {
    size_t n = c.Read(buf.data(), std::min(buf.size(), total - got));
    for (size_t i = 0; i < n; ++i) bad += buf[i] != static_cast<char>((got + i) * 131 >> 3);
    got += n;
    if (n == 0 && c.ArmReader()) std::this_thread::yield();
  }
  writer.join();
  EXPECT_EQ(bad, 0u);
}

}  // namespace
}  // namespace shoal::collective::transport::shm
