#include <gtest/gtest.h>

#include "protocol/attempt_messages.h"
#include "server/saved_models.h"

namespace shoal {
namespace {

using protocol::AttemptReport;
using protocol::Encode;
using protocol::SavedModelUpdate;

Result<AttemptReport> ParseAttemptReport(const Json& json) { return protocol::Decode<AttemptReport>(json); }

TEST(AttemptReport, ParsesTheOptionalFields) {
  auto report = ParseAttemptReport(Json::parse(R"({"state": "RUNNING", "final": false,
    "tasks": [{"role": "worker", "index": 0, "progress": 0.5, "heartbeat_rtt_ms": 2.5, "cpu": 10, "rss": 5}, {"role": "worker", "index": 1}],
    "board_url": "http://host:6006/", "series": [{"role": "worker", "index": 0, "metrics": [{"t": 1, "name": "loss", "value": 1}]}],
    "saved_models": [{"name": "20260101-000000", "state": "saved", "uri": "s3://b/m"}]})"));
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(*report->state, AttemptState::kRunning);
  EXPECT_FALSE(report->message.has_value());
  EXPECT_EQ(report->tasks[0].heartbeat_rtt_ms, 2.5);
  EXPECT_EQ(*report->board_url, "http://host:6006/");
  EXPECT_EQ(report->series.size(), 1u);
  ASSERT_EQ(report->saved_models.size(), 1u);
  EXPECT_EQ(report->saved_models[0].uri, "s3://b/m");
  EXPECT_EQ(report->tasks[0].cpu, 10) << "task fields are read";
  EXPECT_EQ(report->tasks[1].heartbeat_rtt_ms, -1) << "absent: no round trip yet";
  EXPECT_FALSE(ParseAttemptReport(Json{{"tasks", Json::array()}})->board_url.has_value());
  EXPECT_EQ(*ParseAttemptReport(Json{{"tasks", Json::array()}, {"board_url", nullptr}})->board_url, "");
}

TEST(AttemptReport, RefusesMalformedReportsNamingTheField) {
  const char* bad[][2] = {
      {R"([])", "JSON object"},
      {R"({})", "report.tasks is missing"},
      {R"({"tasks": [1]})", "report.tasks[0] must be a JSON object"},
      {R"({"tasks": [{"role": "w", "index": 0, "progress": "half"}]})", "report.tasks[0].progress"},
      {R"({"tasks": [{"role": "w", "index": 0, "heartbeat_rtt_ms": "fast"}]})", "report.tasks[0].heartbeat_rtt_ms"},
      {R"({"tasks": [{"index": 0}]})", "report.tasks[0].role is missing"},
      {R"({"tasks": [], "state": 3})", "report.state must be one of"},
      {R"({"tasks": [], "state": "DONE"})", "report.state must be one of"},
      {R"({"tasks": [], "final": "yes"})", "report.final"},
      {R"j({"tasks": [], "board_url": "javascript:alert(1)"})j", "http://"},
      {R"({"tasks": [], "series": [{"role": "w", "index": 0, "samples": [{"t": 1}]}]})", "\"cpu\""},
      {R"({"tasks": [], "saved_models": [{"name": "a", "state": "lost"}]})", "report.saved_models[0].state"},
  };
  for (const auto& [json, field] : bad) {
    auto report = ParseAttemptReport(Json::parse(json));
    ASSERT_FALSE(report.ok()) << json;
    EXPECT_EQ(report.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(report.status().message().find(field), std::string::npos) << report.status().message();
  }
}

TEST(SavedModels, NamesRequestsByTimeAndTracksTheirState) {
  SavedModels entries;
  int64_t now = 1767225600000;  // 2026-01-01 00:00:00 UTC
  entries.push_back(NewSaveRequest(entries, now));
  entries.push_back(NewSaveRequest(entries, now + 500));
  EXPECT_EQ(entries[0].name, "20260101-000000");
  EXPECT_EQ(entries[1].name, "20260101-000000-2") << "two requests within one second";
  EXPECT_EQ(entries[0].state, SaveState::kRequested);
  EXPECT_EQ(PendingSaveRequests(entries).size(), 2u);
  ApplySavedModelUpdate(entries, SavedModelUpdate{"20260101-000000", SaveState::kSaved, "file:///models/a", ""}, now + 9000);
  EXPECT_EQ(entries[0].state, SaveState::kSaved);
  EXPECT_EQ(entries[0].uri, "file:///models/a");
  EXPECT_EQ(Encode(entries[0]), Json::parse(R"({"name": "20260101-000000", "requested_ms": 1767225600000, "state": "saved",
                                                 "uri": "file:///models/a", "updated_ms": 1767225609000})"));
  auto pending = PendingSaveRequests(entries);
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(Encode(pending[0]), Json::parse(R"({"name": "20260101-000000-2", "requested_ms": 1767225600500})"));
  ApplySavedModelUpdate(entries, SavedModelUpdate{"final", SaveState::kUploading, "", ""}, now);
  EXPECT_EQ(entries.size(), 3u) << "a save the AM started itself is listed too";
}

}  // namespace
}  // namespace shoal
