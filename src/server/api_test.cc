// The REST API over real HTTP, in process: a JobManager on the fake backend behind the
// same hooks, routes and UI files `shoal server` installs.
#include "server/api.h"

#include <gtest/gtest.h>

#include <thread>

#include "common/files.h"
#include "common/gated_http_server.h"
#include "common/http_server.h"
#include "server/server_hooks.h"
#include "server/test_jobs.h"
#include "server/user_tokens.h"
#include "server/web_ui.h"
#include "testing/scratch_directory.h"

namespace shoal {
namespace {

const unsigned char kPage[] = "<!doctype html><p>page</p>";
const WebAsset kAssets[] = {{"/index.html", "text/html", kPage, sizeof kPage - 1, "\"p1\""},
                            {"/static/app.js", "text/javascript", kPage, 4, "\"a1\""}};

// The parameter: whether the server listens beyond loopback (every call needs a token)
// or on loopback (only calls that change state do).
class ApiTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(jobs_.started);
    auth_ = ServerAuth::WithToken(kServerToken, /*loopback=*/!GetParam());
    InstallServerHooks(http_, auth_, requests_, "/home/token");
    InstallApi(http_, ApiContext{*manager_, auth_, requests_, "fake", [] {}});
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
    return SendAs(with_token ? kServerToken : "", method, path, body);
  }
  httplib::Result SendAs(const std::string& token, const std::string& method, const std::string& path,
                         const std::string& body = "", const std::string& host = "") {
    httplib::Client client("127.0.0.1", port_);
    httplib::Headers headers;
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    if (!host.empty()) headers.emplace("Host", host);
    if (method == "GET") return client.Get(path, headers);
    if (method == "PUT") return client.Put(path, headers, body, "application/json");
    if (method == "DELETE") return client.Delete(path, headers);
    return client.Post(path, headers, body, "application/json");
  }
  // Submits a one-task job and waits for it to run.
  std::string RunningJob() {
    auto reply = Send("POST", "/api/v1/jobs",
                      R"({"spec": "name: t\noutputs: [{name: model, uri: /tmp/shoal-api-test-out}]\nroles:\n  worker:\n    command: 'true'\n    cpus: 1\n"})");
    EXPECT_EQ(reply->status, 200) << reply->body;
    std::string id = Json::parse(reply->body)["id"];
    for (int i = 0; i < 2000 && manager_->Get(id, 0, 0).value()["state"] != "RUNNING"; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return id;
  }
  static std::string ErrorMessage(const httplib::Result& reply) {
    return Json::parse(reply->body)["error"]["message"].get<std::string>();
  }

  static constexpr const char* kServerToken = "server-token-0123456789abcdef0123456789";
  testing_support::ScratchDirectory scratch_{"api"};
  TestJobs jobs_{scratch_ / "jobs.db", scratch_ / "home"};
  std::unique_ptr<JobManager>& manager_ = jobs_.manager;
  ServerAuth auth_ = ServerAuth::WithToken(kServerToken, true);
  RequestMetrics requests_;
  GatedHttpServer http_{8};
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
      {"POST", "/api/v1/jobs", R"({"spec": 5})", 400, "submit.spec must be the job spec as YAML text or an object"},
      {"POST", "/api/v1/jobs", R"({"nospec": 1})", 400, "submit.spec is missing"},
      {"POST", "/api/v1/jobs", R"({"spec": "x", "overrides": "a=1"})", 400, "submit.overrides must be a list of strings"},
      {"POST", "/api/v1/jobs/job-42/kill", "{}", 404, "no job 'job-42'"},
      {"POST", "/api/v1/jobs/job-42/save-model", "{}", 404, "no job 'job-42'"},
      {"GET", "/api/v1/jobs/job-42/series", "", 404, "no job 'job-42'"},
      {"GET", "/api/v1/jobs/nonsense", "", 404, "not a job id"},
      {"GET", "/api/v1/jobs/job-42/logs/search?q=x", "", 404, "no job"},
      {"GET", "/api/v1/jobs?state=DANCING", "", 400, "not a job state"},
      {"POST", "/internal/v1/jobs/job-42/attempts/1/report", R"({"tasks": []})", 404, "no attempt 1"},
      {"POST", "/internal/v1/jobs/job-42/attempts/1/report", R"({"tasks": 3})", 400, "report.tasks must be an array"},
      {"GET", "/api/v2/anything", "", 404, "no route"},
      {"PUT", "/api/v1/jobs", "{}", 405, "/api/v1/jobs takes POST, GET, not PUT"},
      {"DELETE", "/api/v1/jobs/job-42/kill", "", 405, "takes POST, not DELETE"},
      {"PUT", "/api/v2/anything", "{}", 404, "no route"},
  };
  for (const Case& c : cases) {
    auto reply = Send(c.method, c.path, c.body);
    ASSERT_TRUE(reply) << c.path;
    EXPECT_EQ(reply->status, c.status) << c.method << " " << c.path << ": " << reply->body;
    EXPECT_NE(ErrorMessage(reply).find(c.message), std::string::npos) << reply->body;
    if (c.status == 405) EXPECT_FALSE(reply->get_header_value("Allow").empty()) << c.path;
  }
  EXPECT_EQ(Send("GET", "/api/v1/health")->status, 200) << "the server is still up";
}

TEST_P(ApiTest, RefusesQueryNumbersThatAreNotWholeNumbersNamingTheParameter) {
  std::string id = RunningJob();
  const std::string job = "/api/v1/jobs/" + id;
  const std::vector<std::string> paths = {"/api/v1/jobs?limit=abc",       "/api/v1/jobs?offset=1.5",
                                          job + "?wait_ms=soon",          job + "/logs?offset=x",
                                          job + "/logs?index=%20",        job + "/series?after_sample=-",
                                          job + "/logs/search?q=a&max=9z"};
  for (const std::string& path : paths) {
    auto reply = Send("GET", path);
    ASSERT_TRUE(reply) << path;
    EXPECT_EQ(reply->status, 400) << path << ": " << reply->body;
    std::string name = path.substr(path.rfind(path.find('&') == std::string::npos ? '?' : '&') + 1);
    name = name.substr(0, name.find('='));
    EXPECT_NE(ErrorMessage(reply).find("query parameter " + name + "="), std::string::npos) << reply->body;
  }
  EXPECT_EQ(Send("GET", "/api/v1/jobs?limit=99999999999999999999")->status, 200) << "too large is clamped";
  EXPECT_EQ(Send("GET", "/api/v1/jobs?limit=")->status, 200) << "empty is absent";
}

TEST_P(ApiTest, ListsJobsByStateInAnyCase) {
  std::string id = RunningJob();
  for (const char* state : {"running", "Running", "RUNNING"}) {
    auto reply = Send("GET", std::string("/api/v1/jobs?state=") + state);
    ASSERT_EQ(reply->status, 200) << state << ": " << reply->body;
    EXPECT_NE(reply->body.find(id), std::string::npos) << state << ": " << reply->body;
  }
}

TEST_P(ApiTest, PagesTheLatestAttemptsTasksWhenAskedAndOtherwiseShowsThemAll) {
  std::string id = RunningJob();
  Json tasks = Json::array();
  for (int i = 0; i < 5; ++i) tasks.push_back({{"role", "worker"}, {"index", i}, {"state", i == 3 ? "FAILED" : "RUNNING"}});
  ASSERT_TRUE(ReportJson(*manager_, id, 1, Json{{"tasks", tasks}}).ok());
  const std::string job = "/api/v1/jobs/" + id;
  Json whole = Json::parse(Send("GET", job)->body);
  EXPECT_EQ(whole["attempts"][0]["tasks"].size(), 5u);
  EXPECT_FALSE(whole.contains("task_page")) << "without task_limit the detail is as it always was";

  auto reply = Send("GET", job + "?task_limit=2&task_offset=2&task_role=worker&task_state=running");
  ASSERT_EQ(reply->status, 200) << reply->body;
  Json paged = Json::parse(reply->body);
  ASSERT_EQ(paged["attempts"][0]["tasks"].size(), 2u);
  EXPECT_EQ(paged["attempts"][0]["tasks"][1]["index"], 4);
  EXPECT_EQ(paged["task_page"], (Json{{"offset", 2}, {"limit", 2}, {"matched", 4}, {"total", 5}}));
  EXPECT_EQ(paged["task_summary"][0]["states"][1], (Json{{"state", "FAILED"}, {"count", 1}}));

  auto bad = Send("GET", job + "?task_limit=2&task_state=BROKEN");
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(ErrorMessage(bad).find("task_state 'BROKEN' is not a task state"), std::string::npos) << bad->body;
  EXPECT_EQ(Send("GET", job + "?task_limit=x")->status, 400);
}

TEST_P(ApiTest, ServesTheApplicationMastersLogAsRoleAm) {
  std::string id = RunningJob();
  std::string dir = manager_->Get(id, 0, 0).value()["attempts"][0]["dir"];
  ASSERT_TRUE(MakeDirectories(dir).ok()) << dir;
  ASSERT_TRUE(WriteFileAtomic(dir + "/am.log", "attempt 1: serving containers\n").ok());
  auto reply = Send("GET", "/api/v1/jobs/" + id + "/logs?role=am");
  ASSERT_EQ(reply->status, 200) << reply->body;
  EXPECT_EQ(Json::parse(reply->body)["text"], "attempt 1: serving containers\n");
  EXPECT_NE(ErrorMessage(Send("GET", "/api/v1/jobs/" + id + "/logs?role=ghost")).find("--role am"), std::string::npos);
}

TEST_P(ApiTest, RefusesBodiesNestedTooDeepAndStaysUp) {
  auto nested = [](int depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  // A million levels: each of these overflowed the stack of the thread handling it (the
  // whole server crashed) before ParseJson refused nesting deeper than kMaxJsonDepth.
  const std::string deep = nested(1'000'000);
  for (const auto& [path, body] : {std::pair<std::string, std::string>{"/api/v1/jobs", R"({"spec": )" + deep + "}"},
                                   {"/internal/v1/jobs/job-1/attempts/1/report", R"({"tasks": [{"ports": )" + deep + "}]}"}}) {
    auto reply = Send("POST", path, body);
    ASSERT_TRUE(reply) << path;
    EXPECT_EQ(reply->status, 400) << path << ": " << reply->body;
    EXPECT_NE(ErrorMessage(reply).find("more than 64 levels deep"), std::string::npos) << reply->body;
  }
  // As deep as allowed, or brackets inside strings: read, then refused for what they say.
  for (const auto& [body, says] :
       {std::pair<std::string, std::string>{R"({"spec": )" + nested(kMaxJsonDepth - 1) + "}",
                                            "submit.spec must be the job spec as YAML text or an object"},
        {R"({"spec": "\")" + std::string(100, '[') + R"("})", "job spec:1: not valid YAML"}}) {
    auto reply = Send("POST", "/api/v1/jobs", body);
    EXPECT_EQ(reply->status, 400) << body;
    EXPECT_NE(ErrorMessage(reply).find(says), std::string::npos) << reply->body;
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
  // A browser's Accept-Encoding gets gzip, never the library's slowest-quality brotli.
  auto compressed = client.Get("/", {{"Accept-Encoding", "gzip, deflate, br"}});
  ASSERT_TRUE(compressed);
  EXPECT_EQ(compressed->get_header_value("Content-Encoding"), "gzip");
}

TEST_P(ApiTest, StateChangesAlwaysNeedATokenAndReadsBeyondLoopback) {
  auto refused = Send("POST", "/api/v1/jobs/job-1/kill", "{}", false);
  EXPECT_EQ(refused->status, 401) << "changing state needs a token, on loopback too";
  EXPECT_NE(ErrorMessage(refused).find("Authorization: Bearer"), std::string::npos);
  EXPECT_NE(ErrorMessage(refused).find("/home/token"), std::string::npos);
  EXPECT_EQ(Send("POST", "/api/v1/jobs", R"({"spec": "x"})", false)->status, 401);
  EXPECT_EQ(Send("POST", "/internal/v1/jobs/job-1/attempts/1/report", "{}", false)->status, 401);
  EXPECT_EQ(SendAs("not-the-token", "POST", "/api/v1/jobs/job-1/kill", "{}")->status, 401);
  EXPECT_EQ(Send("GET", "/api/v1/health", "", false)->status, 200);
  EXPECT_EQ(Send("GET", "/api/v1/jobs", "", false)->status, GetParam() ? 401 : 200)
      << "reads need the token beyond loopback only";
  EXPECT_EQ(Send("GET", "/metrics", "", false)->status, GetParam() ? 401 : 200);
  EXPECT_EQ(Send("POST", "/api/v1/jobs/job-1/kill", "{}", true)->status, 404) << "with the token it gets through";
}

TEST_P(ApiTest, ALoopbackServerRefusesRequestsAddressedToAnotherHostWithoutAToken) {
  std::string id = RunningJob();
  const std::string evil = "evil.example.com:" + std::to_string(port_);
  for (const std::string& path : std::vector<std::string>{"/api/v1/jobs", "/api/v1/jobs/" + id, "/api/v1/jobs/" + id + "/logs?index=0", "/"}) {
    auto rebound = SendAs("", "GET", path, "", evil);
    if (GetParam()) {
      EXPECT_EQ(rebound->status, path == "/" ? 200 : 401) << path << ": beyond loopback a read needs the token anyway";
    } else {
      EXPECT_EQ(rebound->status, 403) << path << ": a DNS-rebound page must not read jobs";
      EXPECT_NE(ErrorMessage(rebound).find("Host 'evil.example.com:"), std::string::npos) << rebound->body;
      EXPECT_EQ(rebound->body.find(id + "\""), std::string::npos) << "no job data in the refusal";
    }
  }
  EXPECT_EQ(SendAs(kServerToken, "GET", "/api/v1/jobs", "", evil)->status, 200) << "a token speaks for itself";
  for (const std::string& host : std::vector<std::string>{"127.0.0.1:" + std::to_string(port_), "localhost:" + std::to_string(port_)}) {
    EXPECT_EQ(SendAs(GetParam() ? kServerToken : "", "GET", "/api/v1/jobs", "", host)->status, 200) << host;
  }
}

// Jobs belong to their submitters: users' own tokens from <home>/users.json.
class OwnershipTest : public ApiTest {
 protected:
  void SetUp() override {
    home_ = scratch_ / "users";
    ASSERT_TRUE(MakeDirectories(home_).ok());
    ann_ = AddUser(home_, "ann", false).value();
    bob_ = AddUser(home_, "bob", false).value();
    root_ = AddUser(home_, "ops", true).value();
    // The server's own auth, with the users file of home_.
    auto auth = ServerAuth::ForServer(GetParam() ? "0.0.0.0" : "127.0.0.1", home_, "owner");
    ASSERT_TRUE(auth.ok()) << auth.status().ToString();
    server_token_ = auth->token();
    ASSERT_TRUE(jobs_.started);
    auth_ = *auth;
    InstallServerHooks(http_, auth_, requests_, home_ + "/token");
    InstallApi(http_, ApiContext{*manager_, auth_, requests_, "fake", [] {}});
    port_ = BindServer(http_, "127.0.0.1", 0).value();
    thread_ = std::thread([this] { http_.listen_after_bind(); });
    while (!http_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::string SubmitAs(const std::string& token, const std::string& claimed_user) {
    auto reply = SendAs(token, "POST", "/api/v1/jobs",
                        Json{{"spec", "name: mine\nenv: {API_KEY: {secret: hunter2-secret}}\nroles:\n  worker:\n    command: 'true'\n    cpus: 1\n"},
                             {"user", claimed_user}}.dump());
    EXPECT_EQ(reply->status, 200) << reply->body;
    std::string id = Json::parse(reply->body)["id"];
    for (int i = 0; i < 2000 && manager_->Get(id, 0, 0).value()["state"] != "RUNNING"; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return id;
  }
  std::string home_, ann_, bob_, root_, server_token_;
};

TEST_P(OwnershipTest, UsersActOnTheirOwnJobsAndAdministratorsOnAll) {
  std::string id = SubmitAs(ann_, "bob");  // the claimed name is ignored: the token says who
  auto detail = Json::parse(SendAs(ann_, "GET", "/api/v1/jobs/" + id)->body);
  EXPECT_EQ(detail["user"], "ann");

  auto denied = SendAs(bob_, "POST", "/api/v1/jobs/" + id + "/kill", "{}");
  EXPECT_EQ(denied->status, 403);
  EXPECT_NE(ErrorMessage(denied).find("belongs to ann"), std::string::npos) << denied->body;
  EXPECT_EQ(SendAs(bob_, "POST", "/api/v1/jobs/" + id + "/save-model", "{}")->status, 403);
  EXPECT_EQ(SendAs(bob_, "POST", "/api/v1/jobs/" + id + "/stack", "{}")->status, 403);
  EXPECT_EQ(SendAs(bob_, "GET", "/api/v1/jobs/" + id)->status, 403) << "nor read it";
  EXPECT_EQ(SendAs(bob_, "GET", "/api/v1/jobs/" + id + "/logs?role=worker&index=0")->status, 403);
  EXPECT_EQ(SendAs(bob_, "GET", "/api/v1/jobs/" + id + "/series")->status, 403);
  EXPECT_EQ(SendAs(bob_, "GET", "/internal/v1/jobs/" + id + "/attempts/1")->status, 403)
      << "only the server's own token reads an attempt's full spec";
  EXPECT_EQ(SendAs(bob_, "POST", "/api/v1/shutdown", "{}")->status, 403);
  EXPECT_EQ(Json::parse(SendAs(bob_, "GET", "/api/v1/whoami")->body)["user"], "bob");

  EXPECT_EQ(SendAs(root_, "GET", "/api/v1/jobs/" + id)->status, 200) << "an administrator reads every job";
  EXPECT_EQ(SendAs(ann_, "POST", "/api/v1/jobs/" + id + "/kill", "{}")->status, 200) << "the owner kills her job";
  std::string by_owner = SubmitAs(server_token_, "carol");
  EXPECT_EQ(Json::parse(SendAs(server_token_, "GET", "/api/v1/jobs/" + by_owner)->body)["user"], "carol")
      << "the server's token may submit for a named user";
  EXPECT_EQ(SendAs(root_, "POST", "/api/v1/jobs/" + by_owner + "/kill", "{}")->status, 200);

  std::string added = AddUser(home_, "dan", false).value();
  EXPECT_EQ(Json::parse(SendAs(added, "GET", "/api/v1/whoami")->body)["user"], "dan") << "known without a restart";
}

TEST_P(OwnershipTest, SecretValuesAreMaskedInTheSpecTheApiShows) {
  std::string id = SubmitAs(ann_, "");
  auto detail = SendAs(ann_, "GET", "/api/v1/jobs/" + id);
  EXPECT_EQ(detail->body.find("hunter2-secret"), std::string::npos) << detail->body;
  EXPECT_EQ(Json::parse(detail->body)["spec"]["env"]["API_KEY"], Json({{"secret", "********"}}));
  auto for_am = SendAs(server_token_, "GET", "/internal/v1/jobs/" + id + "/attempts/1");
  EXPECT_NE(for_am->body.find("hunter2-secret"), std::string::npos) << "the AM gets the real value";
}

INSTANTIATE_TEST_SUITE_P(Users, OwnershipTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "BeyondLoopback" : "Loopback"; });

INSTANTIATE_TEST_SUITE_P(Token, ApiTest, ::testing::Bool(), [](const auto& info) { return info.param ? "Token" : "Loopback"; });

}  // namespace
}  // namespace shoal
