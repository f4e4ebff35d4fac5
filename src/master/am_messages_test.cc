#include "master/am_messages.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

TEST(AmMessages, ReadsWellFormedMessages) {
  auto task = TaskFromBody(Json::parse(R"({"role": "worker", "index": 1})"));
  ASSERT_TRUE(task.ok());
  EXPECT_EQ(task->role, "worker");
  EXPECT_EQ(task->index, 1);
  auto reg = RegisterFromBody(Json::parse(R"({"host": "10.0.0.2", "ports": [2000, 2001], "gpus": [3]})"));
  ASSERT_TRUE(reg.ok()) << reg.status().ToString();
  EXPECT_EQ(reg->ports, (std::vector<int>{2000, 2001}));
  EXPECT_EQ(*reg->gpus, (std::vector<int>{3}));
  auto beat = HeartbeatFromBody(Json::parse(
      R"({"progress": 0.5, "sample": {"t": 1, "cpu": 2.5, "rss": 1000}, "metrics": [{"t": 1, "step": 2, "name": "loss", "value": 0.1}]})"));
  ASSERT_TRUE(beat.ok()) << beat.status().ToString();
  EXPECT_EQ(beat->progress, 0.5);
  EXPECT_EQ(beat->metrics.size(), 1u);
  auto exit = ExitFromBody(Json::parse(R"({"exit_code": 3, "message": "boom"})"));
  ASSERT_TRUE(exit.ok());
  EXPECT_EQ(exit->exit.exit_code, 3);
  EXPECT_EQ(exit->message, "boom");
}

// Each of these once reached undefined behaviour or an exception (found by
// fuzz/am_message_fuzzer.cc): now each is refused with a sentence.
TEST(AmMessages, RefusesWhatDoesNotFit) {
  EXPECT_FALSE(TaskFromBody(Json::parse(R"({"role": "worker"})")).ok());
  EXPECT_FALSE(TaskFromBody(Json::parse(R"({"role": "worker", "index": 4294967296})")).ok());
  EXPECT_FALSE(TaskFromBody(Json::parse("[1, 2]")).ok());
  EXPECT_FALSE(StartedFromBody(Json::parse(R"({"pid": 5e68})")).ok());
  EXPECT_FALSE(RegisterFromBody(Json::parse(R"({"ports": "2000"})")).ok());
  EXPECT_FALSE(RegisterFromBody(Json::parse(R"({"ports": [1.5e300]})")).ok());
  auto huge_rss = HeartbeatFromBody(Json::parse(R"({"sample": {"rss": 1e300}})"));
  ASSERT_FALSE(huge_rss.ok());
  EXPECT_NE(huge_rss.status().message().find("sample.rss"), std::string::npos) << huge_rss.status().message();
  EXPECT_FALSE(HeartbeatFromBody(Json::parse(R"({"metrics": [{"t": 1, "value": 2}]})")).ok()) << "a metric needs a name";
  EXPECT_FALSE(HeartbeatFromBody(Json::parse(R"({"progress": "half"})")).ok());
  EXPECT_FALSE(ExitFromBody(Json::parse(R"({"exit_code": -1e40})")).ok());
}

}  // namespace
}  // namespace shoal
