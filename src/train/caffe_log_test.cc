#include "train/caffe_log.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <regex>

namespace shoal::train {
namespace {

// The regular expressions of Caffe's tools/extra/parse_log.py.
const std::regex kIteration(R"(Iteration (\d+))");
const std::regex kTrainOutput(R"(Train net output #(\d+): (\S+) = ([\.\deE+-]+))");
const std::regex kTestOutput(R"(Test net output #(\d+): (\S+) = ([\.\deE+-]+))");

TEST(CaffeLog, GlogPrefixAsParseLogReadsIt) {
  setenv("TZ", "UTC", 1);
  tzset();
  // 2026-12-03 10:17:34.123456 UTC
  EXPECT_EQ(GlogPrefix(1796293054.123456, 1234, kLogIteration), "I1203 10:17:34.123456  1234 solver.cpp:218] ");
  std::string line = CaffeLine(kLogDone, "Optimization Done.");
  EXPECT_TRUE(std::regex_match(line, std::regex(R"(I\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ solver\.cpp:315\] Optimization Done\.)")))
      << line;
}

TEST(CaffeLog, SmoothedLossIsTheMeanOfTheLastAverageLossLosses) {
  SmoothedLoss one(1);
  one.Add(4);
  one.Add(2);
  EXPECT_FLOAT_EQ(one.value(), 2);
  SmoothedLoss three(3);
  const float losses[] = {6, 3, 3, 9, 0, 6};
  const float want[] = {6, 4.5f, 4, 5, 4, 5};  // (6) (6+3)/2 (6+3+3)/3 (3+3+9)/3 (3+9+0)/3 (9+0+6)/3
  for (int i = 0; i < 6; ++i) {
    three.Add(losses[i]);
    EXPECT_FLOAT_EQ(three.value(), want[i]) << "after " << i + 1;
  }
}

TEST(CaffeLog, TrainAndTestLinesInCaffesWordsAndOrder) {
  std::vector<NetOutput> outputs = {{"loss", {0.6931472f}, 1}, {"accuracy", {0.875f}, 0}, {"aux_loss", {2.5f}, 0.3f}};
  auto lines = TrainDisplayLines(200, 12.5, 8, 100, 0.52f, outputs);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "Iteration 200 (12.5 iter/s, 8s/100 iters), loss = 0.52");
  EXPECT_EQ(lines[1], "    Train net output #0: accuracy = 0.875");
  EXPECT_EQ(lines[2], "    Train net output #1: aux_loss = 2.5 (* 0.3 = 0.75 loss)");
  EXPECT_EQ(lines[3], "    Train net output #2: loss = 0.693147 (* 1 = 0.693147 loss)");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(lines[0], m, kIteration));
  EXPECT_EQ(m[1], "200");
  ASSERT_TRUE(std::regex_search(lines[3], m, kTrainOutput));
  EXPECT_EQ(m[2], "loss");
  EXPECT_EQ(m[3], "0.693147");

  auto test = TestOutputLines({{"loss", {0.25f}, 1}, {"accuracy", {1e-7f}, 0}});
  ASSERT_EQ(test.size(), 2u);
  EXPECT_EQ(test[0], "    Test net output #0: accuracy = 1e-07");
  EXPECT_EQ(test[1], "    Test net output #1: loss = 0.25 (* 1 = 0.25 loss)");
  ASSERT_TRUE(std::regex_search(test[0], m, kTestOutput));
  EXPECT_EQ(m[3], "1e-07");
  // A blob of several values: one line per value, numbered on.
  auto many = TestOutputLines({{"prob", {0.5f, 0.25f}, 0}});
  EXPECT_EQ(many, (std::vector<std::string>{"    Test net output #0: prob = 0.5", "    Test net output #1: prob = 0.25"}));
}

}  // namespace
}  // namespace shoal::train
