#include "container/output_capture.h"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "testing/scratch_directory.h"

namespace shoal {
namespace {

std::string ReadAll(const std::string& path) {
  std::string text;
  int fd = open(path.c_str(), O_RDONLY);
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) text.append(buf, n);
  close(fd);
  return text;
}

// One program's stdout and stderr as pipes into a capture that logs to a scratch file
// and keeps the stderr lines it is handed.
class OutputCaptureOfOneProgram : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(pipe(out_), 0);
    ASSERT_EQ(pipe(err_), 0);
    log_ = open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    capture_.emplace(out_[0], err_[0], log_, [this](std::string_view line) { lines_.emplace_back(line); });
  }
  void TearDown() override { close(log_); }
  static void Write(int fd, const std::string& text) {
    ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  }
  // Closes the program's ends, copies everything and returns the log.
  std::string Finish() {
    close(out_[1]);
    close(err_[1]);
    while (capture_->open()) EXPECT_TRUE(capture_->Pump(100).ok());
    capture_->Drain();
    capture_.reset();
    return ReadAll(path_);
  }
  int out_[2], err_[2];
  testing_support::ScratchDirectory scratch_{"capture"};
  std::string path_ = scratch_ / "task.log";
  int log_ = -1;
  std::vector<std::string> lines_;
  std::optional<OutputCapture> capture_;
};

TEST_F(OutputCaptureOfOneProgram, CopiesBothStreamsAndSplitsStderrLines) {
  Write(out_[1], "hello\n");
  Write(err_[1], "reporter progress:0.5\nhalf");
  ASSERT_TRUE(capture_->Pump(100).ok());
  ASSERT_TRUE(capture_->Pump(100).ok());
  Write(err_[1], " a line\n");
  std::string logged = Finish();
  EXPECT_EQ(lines_, (std::vector<std::string>{"reporter progress:0.5", "half a line"}));
  EXPECT_NE(logged.find("hello\n"), std::string::npos);
  EXPECT_NE(logged.find("half a line\n"), std::string::npos);
}

TEST(OutputCapture, CutsOverlongLinesSoMemoryStaysBounded) {
  int out[2], err[2];
  ASSERT_EQ(pipe(out), 0);
  ASSERT_EQ(pipe(err), 0);
  close(out[1]);
  size_t longest = 0;
  size_t total = 0;
  OutputCapture capture(out[0], err[0], -1, [&](std::string_view line) {
    longest = std::max(longest, line.size());
    total += line.size();
  });
  std::string chunk(8192, 'x');
  for (int i = 0; i < 40; ++i) {  // 320 KiB without a newline
    ASSERT_EQ(write(err[1], chunk.data(), chunk.size()), static_cast<ssize_t>(chunk.size()));
    ASSERT_TRUE(capture.Pump(100).ok());
  }
  close(err[1]);
  while (capture.open()) ASSERT_TRUE(capture.Pump(100).ok());
  capture.Drain();
  EXPECT_LE(longest, OutputCapture::kMaxLine);
  EXPECT_EQ(total, 40u * 8192u);
}

}  // namespace
}  // namespace shoal

namespace shoal {
namespace {

TEST(OutputCapture, PrefixesTheLinesOfSeveralProcesses) {
  int a[2], b[2];
  ASSERT_EQ(pipe(a), 0);
  ASSERT_EQ(pipe(b), 0);
  testing_support::ScratchDirectory scratch("capture");
  std::string path = scratch / "task.log";
  int log = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  std::vector<std::string> lines;
  {
    OutputCapture capture({{a[0], "[0] ", true}, {b[0], "[1] ", true}}, log,
                          [&](std::string_view line) { lines.emplace_back(line); });
    ASSERT_EQ(write(a[1], "from zero, ", 11), 11);
    ASSERT_EQ(write(b[1], "from one\n", 9), 9);
    ASSERT_TRUE(capture.Pump(100).ok());
    ASSERT_EQ(write(a[1], "done\nlast", 9), 9);
    close(a[1]);
    close(b[1]);
    while (capture.open()) ASSERT_TRUE(capture.Pump(100).ok());
    capture.Drain();
  }
  std::string logged = ReadAll(path);
  EXPECT_NE(logged.find("[1] from one\n"), std::string::npos) << logged;
  EXPECT_NE(logged.find("[0] from zero, done\n"), std::string::npos) << logged;
  EXPECT_NE(logged.find("[0] last\n"), std::string::npos) << logged;
  EXPECT_EQ(lines.size(), 3u);
  close(log);
}

// A secret split across two writes is still masked, in the log and in the lines the
// callback sees (the failure message), and a secret inside a longer one goes with it.
// The supervising loop waits in Pump for more than output: a program's exit (its pidfd)
// and a stop request (an eventfd). A minute-long wait must end at once when one is ready,
// and leave it unread for the caller.
TEST_F(OutputCaptureOfOneProgram, AWakeDescriptorEndsTheWaitAndIsLeftUnread) {
  int wake = eventfd(1, EFD_CLOEXEC | EFD_NONBLOCK);
  ASSERT_GE(wake, 0);
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(capture_->Pump(60'000, {wake}).ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  uint64_t count = 0;
  EXPECT_EQ(read(wake, &count, sizeof count), static_cast<ssize_t>(sizeof count));
  EXPECT_EQ(count, 1u);
  close(wake);
  EXPECT_EQ(Finish(), "");
}

TEST(OutputCapture, WithEveryStreamClosedItStillWaitsForAWakeDescriptor) {
  testing_support::ScratchDirectory scratch("capture");
  std::string path = scratch / "task.log";
  int log = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  OutputCapture capture({}, log, [](std::string_view) {});
  int wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  ASSERT_GE(wake, 0);
  std::thread waker([wake] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    uint64_t one = 1;
    (void)!write(wake, &one, sizeof one);
  });
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(capture.Pump(60'000, {wake}).ok());
  auto waited = std::chrono::steady_clock::now() - start;
  waker.join();
  EXPECT_GE(waited, std::chrono::milliseconds(40));  // it waited for the descriptor, not returned at once
  EXPECT_LT(waited, std::chrono::seconds(30));       // and woke for it, not for the timeout
  close(wake);
  close(log);
}

TEST_F(OutputCaptureOfOneProgram, MasksSecretValuesEvenWhenSplitAcrossWrites) {
  capture_->MaskSecrets({"hunter2", "", "xhunter2x"});
  Write(out_[1], "key=hun");
  ASSERT_TRUE(capture_->Pump(100).ok());
  Write(out_[1], "ter2 and hunter2hunter2\nxhunter2x\n");
  Write(err_[1], "failed: hunter2\n");
  std::string logged = Finish();
  EXPECT_EQ(logged.find("hunter2"), std::string::npos) << logged;
  EXPECT_NE(logged.find("key=******** and ****************\n"), std::string::npos) << logged;
  EXPECT_NE(logged.find("\n********\n"), std::string::npos) << logged;
  EXPECT_EQ(lines_, (std::vector<std::string>{"failed: ********"}));
}

}  // namespace
}  // namespace shoal
