#include "protocol/series.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

TEST(Series, ParsesSamplesAndMetricsWithOptionalFields) {
  Json series = Json::parse(R"([{"role": "worker", "index": 1,
    "samples": [{"t": 1000, "cpu": 150.5, "rss": 2048, "progress": 0.5, "gpu_util": null, "gpu_mem": 1e9}],
    "metrics": [{"t": 1001, "step": 7, "name": "loss", "value": -0.25}, {"t": 1002, "step": null, "name": "<b>x</b>", "value": 1}]}])");
  auto parsed = ParseSeries(series);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(parsed->size(), 1u);
  const TaskSeries& task = (*parsed)[0];
  EXPECT_EQ(task.role, "worker");
  EXPECT_EQ(task.index, 1);
  ASSERT_EQ(task.samples.size(), 1u);
  EXPECT_EQ(task.samples[0].rss, 2048);
  EXPECT_FALSE(task.samples[0].gpu_util.has_value());
  EXPECT_EQ(*task.samples[0].gpu_mem, 1e9);
  ASSERT_EQ(task.metrics.size(), 2u);
  EXPECT_EQ(*task.metrics[0].step, 7);
  EXPECT_FALSE(task.metrics[1].step.has_value());
  EXPECT_EQ(task.metrics[1].name, "<b>x</b>") << "names are any text; the UI shows them as text";
  EXPECT_EQ(ToJson(task)["metrics"][1]["step"], nullptr);
}

TEST(Series, RefusesMalformedValuesNamingTheField) {
  struct Case {
    const char* json;
    const char* message;
  } cases[] = {
      {R"({"role": "w"})", "must be an array"},
      {R"([{"index": 0}])", "\"role\""},
      {R"([{"role": "w", "index": -1}])", "\"index\""},
      {R"([{"role": "w", "index": 0, "samples": [{"t": 1, "cpu": "x", "rss": 1}]}])", "\"cpu\" must be a number"},
      {R"([{"role": "w", "index": 0, "samples": [{"t": 1, "cpu": 1, "rss": 1, "progress": 2}]}])", "\"progress\" is 2"},
      {R"([{"role": "w", "index": 0, "metrics": [{"t": 1, "name": "a", "value": 1, "step": 1.5}]}])", "whole number"},
      {R"([{"role": "w", "index": 0, "metrics": [{"t": 1, "name": "", "value": 1}]}])", "\"name\""},
      {R"([{"role": "w", "index": 0, "metrics": [{"t": 1, "name": "a"}]}])", "\"value\""},
      {R"([{"role": "w", "index": 0, "metrics": {}}])", "\"metrics\" must be an array"},
  };
  for (const Case& c : cases) {
    auto parsed = ParseSeries(Json::parse(c.json));
    ASSERT_FALSE(parsed.ok()) << c.json;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find(c.message), std::string::npos) << parsed.status().message();
  }
  EXPECT_TRUE(ParseSeries(Json()).ok()) << "null means no series";
}

}  // namespace
}  // namespace shoal
