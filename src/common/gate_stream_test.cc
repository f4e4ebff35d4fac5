// GateStream on a record-keeping socket pair (SOCK_SEQPACKET: each send arrives as one
// record), so the test sees how many sends a response took.
#include "common/gate_stream.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace shoal {
namespace {

class GateStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int fds[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0, fds), 0);
    connection_ = std::make_unique<GateConnection>(gate_, fds[0]);
    peer_ = fds[1];
  }
  void TearDown() override {
    if (peer_ >= 0) close(peer_);
  }
  // The records that have arrived, without waiting.
  std::vector<std::string> Records() {
    std::vector<std::string> records;
    for (;;) {
      pollfd p{peer_, POLLIN, 0};
      if (poll(&p, 1, 0) <= 0) return records;
      std::string record(256 * 1024, '\0');
      ssize_t n = recv(peer_, record.data(), record.size(), 0);
      if (n <= 0) return records;
      record.resize(static_cast<size_t>(n));
      records.push_back(std::move(record));
    }
  }

  ConnectionGate gate_{GateLimits{}, [](std::unique_ptr<GateConnection>) {}};
  std::unique_ptr<GateConnection> connection_;
  int peer_ = -1;
};

TEST_F(GateStreamTest, AHeadAndASmallBodyLeaveInOneSendAtFlush) {
  GateStream stream(*connection_, std::chrono::milliseconds(1000));
  const std::string head = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n";
  EXPECT_EQ(stream.write(head.data(), head.size()), static_cast<ssize_t>(head.size()));
  EXPECT_EQ(stream.write("hello", 5), 5);
  EXPECT_TRUE(Records().empty()) << "sent before the response was whole";
  EXPECT_TRUE(stream.Flush());
  EXPECT_EQ(Records(), std::vector<std::string>{head + "hello"});
  EXPECT_TRUE(stream.Flush()) << "nothing held: nothing to send, and not broken";
  EXPECT_TRUE(Records().empty());
}

TEST_F(GateStreamTest, ALargeWriteTakesWhatIsHeldAlongInOrder) {
  GateStream stream(*connection_, std::chrono::milliseconds(1000));
  const std::string head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::string chunk(GateStream::kHeldBytes + 1, 'x');
  stream.write(head.data(), head.size());
  EXPECT_EQ(stream.write(chunk.data(), chunk.size()), static_cast<ssize_t>(chunk.size()));
  EXPECT_EQ(Records(), std::vector<std::string>{head + chunk}) << "the held head goes out with the chunk, first";
  stream.write("0\r\n\r\n", 5);
  EXPECT_TRUE(stream.Flush());
  EXPECT_EQ(Records(), std::vector<std::string>{"0\r\n\r\n"});
}

TEST_F(GateStreamTest, AClosedPeerBreaksTheStreamAtTheSend) {
  GateStream stream(*connection_, std::chrono::milliseconds(1000));
  close(peer_);
  peer_ = -1;
  EXPECT_EQ(stream.write("held", 4), 4);  // held: nothing is sent yet
  EXPECT_FALSE(stream.Flush());
  EXPECT_TRUE(stream.broken());
  EXPECT_EQ(stream.write("more", 4), -1);
}

}  // namespace
}  // namespace shoal
