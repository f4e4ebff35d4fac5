#include "container/output_capture.h"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

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

TEST(OutputCapture, CopiesBothStreamsAndSplitsStderrLines) {
  int out[2], err[2];
  ASSERT_EQ(pipe(out), 0);
  ASSERT_EQ(pipe(err), 0);
  char path[] = "/tmp/shoal-capture-XXXXXX";
  int log = mkstemp(path);
  std::vector<std::string> lines;
  {
    OutputCapture capture(out[0], err[0], log, [&](std::string_view line) { lines.emplace_back(line); });
    ASSERT_EQ(write(out[1], "hello\n", 6), 6);
    ASSERT_EQ(write(err[1], "reporter progress:0.5\nhalf", 26), 26);
    ASSERT_TRUE(capture.Pump(100).ok());
    ASSERT_TRUE(capture.Pump(100).ok());
    ASSERT_EQ(write(err[1], " a line\n", 8), 8);
    close(out[1]);
    close(err[1]);
    while (capture.open()) ASSERT_TRUE(capture.Pump(100).ok());
    capture.Drain();
  }
  EXPECT_EQ(lines, (std::vector<std::string>{"reporter progress:0.5", "half a line"}));
  std::string logged = ReadAll(path);
  EXPECT_NE(logged.find("hello\n"), std::string::npos);
  EXPECT_NE(logged.find("half a line\n"), std::string::npos);
  close(log);
  unlink(path);
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
  char path[] = "/tmp/shoal-capture-XXXXXX";
  int log = mkstemp(path);
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
  unlink(path);
}

// A secret split across two writes is still masked, in the log and in the lines the
// callback sees (the failure message), and a secret inside a longer one goes with it.
TEST(OutputCapture, MasksSecretValuesEvenWhenSplitAcrossWrites) {
  int out[2], err[2];
  ASSERT_EQ(pipe(out), 0);
  ASSERT_EQ(pipe(err), 0);
  char path[] = "/tmp/shoal-capture-XXXXXX";
  int log = mkstemp(path);
  std::vector<std::string> lines;
  {
    OutputCapture capture(out[0], err[0], log, [&](std::string_view line) { lines.emplace_back(line); });
    capture.MaskSecrets({"hunter2", "", "xhunter2x"});
    ASSERT_EQ(write(out[1], "key=hun", 7), 7);
    ASSERT_TRUE(capture.Pump(100).ok());
    const std::string rest = "ter2 and hunter2hunter2\nxhunter2x\n", failed = "failed: hunter2\n";
    ASSERT_EQ(write(out[1], rest.data(), rest.size()), static_cast<ssize_t>(rest.size()));
    ASSERT_EQ(write(err[1], failed.data(), failed.size()), static_cast<ssize_t>(failed.size()));
    close(out[1]);
    close(err[1]);
    while (capture.open()) ASSERT_TRUE(capture.Pump(100).ok());
    capture.Drain();
  }
  std::string logged = ReadAll(path);
  EXPECT_EQ(logged.find("hunter2"), std::string::npos) << logged;
  EXPECT_NE(logged.find("key=******** and ****************\n"), std::string::npos) << logged;
  EXPECT_NE(logged.find("\n********\n"), std::string::npos) << logged;
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "failed: ********");
  close(log);
  unlink(path);
}

}  // namespace
}  // namespace shoal
