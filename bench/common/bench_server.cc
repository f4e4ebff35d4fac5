#include "bench/common/bench_server.h"

#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "common/clock.h"
#include "common/files.h"
#include "common/token_file.h"
#include "common/process.h"

namespace shoal {

Result<BenchServer> BenchServer::Start(const std::string& name, const std::string& shoal, std::vector<std::string> extra_args) {
  std::string home_template = "/tmp/shoal-" + name + "-XXXXXX";
  if (!mkdtemp(home_template.data())) return Unavailable("cannot make a scratch home under /tmp");
  auto env = CurrentEnvironment();
  env["SHOAL_HOME"] = home_template;
  std::vector<std::string> argv = {AbsolutePath(shoal), "server", "--home", home_template, "--port", "0"};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  ASSIGN_OR_RETURN(pid_t pid, RealProcessLauncher::Instance().Spawn({.argv = argv, .env = env, .new_session = true}));
  BenchServer server(name, home_template, pid);
  std::string url;
  for (int i = 0; i < 400 && url.empty(); ++i) {
    auto info = ReadFile(server.home_ + "/server.json");
    if (info.ok()) url = Json::parse(*info, nullptr, false).value("url", "");
    else std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  if (url.empty()) {
    server.keep_state();
    return Unavailable("the Shoal server did not start; its log is in " + server.home_);
  }
  server.client_.emplace(url, 30'000);
  server.client_->set_bearer_token(ReadTokenFile(server.home_ + "/token"));
  return server;
}

BenchServer::BenchServer(BenchServer&& other) noexcept
    : name_(std::move(other.name_)), home_(std::move(other.home_)), pid_(other.pid_), client_(std::move(other.client_)),
      keep_(other.keep_) {
  other.pid_ = 0;
}

BenchServer::~BenchServer() {
  if (pid_ <= 0) return;
  RealProcessLauncher::Instance().Signal(pid_, SIGTERM);
  RealProcessLauncher::Instance().Wait(pid_);
  if (keep_) {
    std::fprintf(stderr, "bench %s: state and logs kept in %s\n", name_.c_str(), home_.c_str());
    return;
  }
  std::error_code ignored;
  std::filesystem::remove_all(home_, ignored);
}

Result<BenchJobTimes> RunBenchJob(const HttpJsonClient& server, const Json& spec) {
  int64_t submit_wall = SystemClock::Instance().WallMillis();
  auto start = std::chrono::steady_clock::now();
  // As the server's owner: a root server runs the owner's jobs as its own account, where a
  // made-up user would have none linked and be refused.
  ASSIGN_OR_RETURN(Json reply, server.Post("/api/v1/jobs", Json{{"spec", spec}}));
  std::string id = reply["id"];
  int64_t version = 0;
  while (true) {
    ASSIGN_OR_RETURN(Json job, server.Get("/api/v1/jobs/" + id + "?wait_version=" + std::to_string(version) + "&wait_ms=5000"));
    version = job["version"];
    std::string state = job["state"];
    if (state == "SUCCEEDED") {
      BenchJobTimes times;
      times.succeeded_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      int64_t last_start = 0;
      for (const Json& task : job["attempts"].back()["tasks"]) last_start = std::max(last_start, task["started_ms"].get<int64_t>());
      times.running_ms = static_cast<double>(last_start - submit_wall);
      return times;
    }
    if (state == "FAILED" || state == "KILLED") {
      return Internal("benchmark job " + id + " ended " + state + ": " + job.value("message", ""));
    }
  }
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

}  // namespace shoal
