// The REST API over real HTTP, in process: a JobManager on the fake backend behind the
// same hooks, routes and UI files `shoal server` installs.
#include "server/api.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

#include "common/http_server.h"
#include "server/server_hooks.h"
#include "server/test_jobs.h"
#include "server/web_ui.h"

namespace shoal {
namespace {

const unsigned char kPage[] = "<!doctype html><p>page</p>";
const WebAsset kAssets[] = {{"/index.html", "text/html", kPage, sizeof kPage - 1, "\"p1\""},
                            {"/static/app.js", "text/javascript", kPage, 4, "\"a1\""}};

class ApiTest : public ::testing::TestWithParam<bool> {  // the parameter: with a token
 protected:
  void SetUp() override {
    ASSERT_TRUE(jobs_.started);
    auth_ = GetParam() ? ServerAuth::WithToken("secret") : ServerAuth::Open();
    InstallServerHooks(http_, auth_, requests_, "/home/token");
    InstallApi(http_, ApiContext{*manager_, requests_, "fake", [] {}});
    InstallWebUi(http_, kAssets);
    port_ = BindServer(http_, "127.0.0.1", 0).value();
    thread_ = std::thread([this] { http_.listen_after_bind(); });
    while (!http_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  void TearDown() override {
    http_.stop();
    thread_.join();
  }

  httplib::Result Send(const std::string& method, const std::string& path, const std::string& body = "",
                       bool with_token = true) {
    httplib::Client client("127.0.0.1", port_);
    httplib::Headers headers;
    if (with_token && auth_.enabled()) headers.emplace("Authorization", "Bearer secret");
    if (method == "GET") return client.Get(path, headers);
    return client.Post(path, headers, body, "application/json");
  }
  // Submits a one-task job and waits for it to run.
  std::string RunningJob() {
    auto reply = Send("POST", "/api/v1/jobs", R"({"spec": "name: t\nroles:\n  worker:\n    command: 'true'\n    cpus: 1\n"})");
    EXPECT_EQ(reply->status, 200) << reply->body;
    std::string id = Json::parse(reply->body)["id"];
    for (int i = 0; i < 200 && manager_->Get(id, 0, 0).value()["state"] != "RUNNING"; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return id;
  }
  static std::string ErrorMessage(const httplib::Result& reply) {
    return Json::parse(reply->body)["error"]["message"].get<std::string>();
  }

  TestJobs jobs_{"api"};
  std::unique_ptr<JobManager>& manager_ = jobs_.manager;
  ServerAuth auth_ = ServerAuth::Open();
  RequestMetrics requests_;
  httplib::Server http_;
  int port_ = 0;
  std::thread thread_;
};

TEST_P(ApiTest, RefusesMalformedBodiesAndUnknownJobsWithClear4xx) {
  struct Case {
    const char* method;
    const char* path;
    const char* body;
    int status;
    const char* message;
  } cases[] = {
      {"POST", "/api/v1/jobs", "{not json", 400, "not valid JSON"},
      {"POST", "/api/v1/jobs", "[1,2]", 400, "must be a JSON object"},
      {"POST", "/api/v1/jobs", R"({"spec": 5})", 400, ""},
      {"POST", "/api/v1/jobs", R"({"nospec": 1})", 400, "\"spec\""},
      {"POST", "/api/v1/jobs/job-42/kill", "{}", 404, "no job 'job-42'"},
      {"POST", "/api/v1/jobs/job-42/save-model", "{}", 404, "no job 'job-42'"},
      {"GET", "/api/v1/jobs/job-42/series", "", 404, "no job 'job-42'"},
      {"GET", "/api/v1/jobs/nonsense", "", 404, "not a job id"},
      {"GET", "/api/v1/jobs/job-42/logs/search?q=x", "", 404, "no job"},
      {"GET", "/api/v1/jobs?state=DANCING", "", 400, "not a job state"},
      {"POST", "/internal/v1/jobs/job-42/attempts/1/report", R"({"tasks": []})", 404, "no attempt 1"},
      {"POST", "/internal/v1/jobs/job-42/attempts/1/report", R"({"tasks": 3})", 400, "\"tasks\""},
      {"GET", "/api/v2/anything", "", 404, "no route"},
  };
  for (const Case& c : cases) {
    auto reply = Send(c.method, c.path, c.body);
    ASSERT_TRUE(reply) << c.path;
    EXPECT_EQ(reply->status, c.status) << c.method << " " << c.path << ": " << reply->body;
    EXPECT_NE(ErrorMessage(reply).find(c.message), std::string::npos) << reply->body;
  }
  EXPECT_EQ(Send("GET", "/api/v1/health")->status, 200) << "the server is still up";
}

TEST_P(ApiTest, ServesSeriesSaveModelAndMetrics) {
  std::string id = RunningJob();
  auto report = Send("POST", "/internal/v1/jobs/" + id + "/attempts/1/report",
                     R"({"state": "RUNNING", "tasks": [{"role": "worker", "index": 0, "state": "RUNNING", "heartbeat_rtt_ms": 4}],
                         "series": [{"role": "worker", "index": 0, "samples": [{"t": 5, "cpu": 12, "rss": 99}]}]})");
  ASSERT_EQ(report->status, 200) << report->body;
  auto series = Send("GET", "/api/v1/jobs/" + id + "/series?attempt=1");
  ASSERT_EQ(series->status, 200) << series->body;
  EXPECT_EQ(Json::parse(series->body)["tasks"][0]["samples"][0]["rss"], 99);

  auto saved = Send("POST", "/api/v1/jobs/" + id + "/save-model", "{}");
  ASSERT_EQ(saved->status, 200) << saved->body;
  std::string name = Json::parse(saved->body)["name"];
  EXPECT_EQ(Json::parse(Send("GET", "/api/v1/jobs/" + id)->body)["saved_models"][0]["name"], name);

  // A request's latency is observed once its reply has been written, so the client can
  // read the reply before the server has counted it: wait (bounded) for the count.
  const std::string save_route = "route=\"/api/v1/jobs/:id/save-model\"";
  auto metrics = Send("GET", "/metrics");
  for (int i = 0; i < 200 && metrics && metrics->body.find(save_route) == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    metrics = Send("GET", "/metrics");
  }
  ASSERT_TRUE(metrics);
  ASSERT_EQ(metrics->status, 200);
  EXPECT_EQ(metrics->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(metrics->body.find("shoal_jobs{state=\"RUNNING\"} 1"), std::string::npos) << metrics->body;
  EXPECT_NE(metrics->body.find("shoal_heartbeat_rtt_seconds_count 1"), std::string::npos);
  EXPECT_NE(metrics->body.find(save_route), std::string::npos) << metrics->body;
}

TEST_P(ApiTest, ServesThePageWithAStrictPolicy) {
  for (const char* path : {"/", "/jobs/job-3"}) {
    auto page = Send("GET", path, "", false);
    ASSERT_EQ(page->status, 200) << path;
    EXPECT_EQ(page->body, reinterpret_cast<const char*>(kPage));
    EXPECT_NE(page->get_header_value("Content-Security-Policy").find("script-src 'self'"), std::string::npos);
    EXPECT_EQ(page->get_header_value("X-Content-Type-Options"), "nosniff");
  }
  EXPECT_EQ(Send("GET", "/static/app.js", "", false)->body, "<!do");
  EXPECT_EQ(Send("GET", "/static/missing.js", "", false)->status, 404);
  httplib::Client client("127.0.0.1", port_);
  EXPECT_EQ(client.Get("/static/app.js", {{"If-None-Match", "\"a1\""}})->status, 304);
}

TEST_P(ApiTest, StateChangesNeedTheTokenBeyondLoopback) {
  auto refused = Send("POST", "/api/v1/jobs/job-1/kill", "{}", false);
  auto list = Send("GET", "/api/v1/jobs", "", false);
  if (!GetParam()) {
    EXPECT_EQ(refused->status, 404) << "a loopback server needs no token";
    EXPECT_EQ(list->status, 200);
    return;
  }
  EXPECT_EQ(refused->status, 401);
  EXPECT_NE(ErrorMessage(refused).find("Authorization: Bearer"), std::string::npos);
  EXPECT_NE(ErrorMessage(refused).find("/home/token"), std::string::npos);
  EXPECT_EQ(list->status, 401);
  EXPECT_EQ(Send("POST", "/internal/v1/jobs/job-1/attempts/1/report", "{}", false)->status, 401);
  EXPECT_EQ(Send("GET", "/api/v1/health", "", false)->status, 200);
  EXPECT_EQ(Send("POST", "/api/v1/jobs/job-1/kill", "{}", true)->status, 404) << "with the token it gets through";
}

INSTANTIATE_TEST_SUITE_P(Token, ApiTest, ::testing::Bool(), [](const auto& info) { return info.param ? "Token" : "Loopback"; });

}  // namespace
}  // namespace shoal
