// bench/launch: how long Shoal takes to start and finish a job of N tasks running
// /bin/true, against starting the same N processes from a shell script, in one run.
//
//   build/bench/launch/bench_launch [--shoal build/shoal] [--repeats 10]
//
// It starts a private Shoal server, submits jobs through the REST API, and reads:
//   submit->running:   from the submit call until the last task's program started
//                      (the tasks' own start times, as the containers reported them);
//   submit->succeeded: from the submit call until the API reports SUCCEEDED.
// The baseline is `sh -c 'for i in 1..N; do /bin/true & done; wait'`. Reported are
// medians and the ratio shoal / shell.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/files.h"
#include "common/http_client.h"
#include "common/process.h"

namespace shoal {
namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double ShellMillis(int n) {
  std::string script = "for i in $(seq " + std::to_string(n) + "); do /bin/true & done; wait";
  auto start = std::chrono::steady_clock::now();
  auto pid = RealProcessLauncher::Instance().Spawn({.argv = {"/bin/sh", "-c", script}, .env = CurrentEnvironment()});
  if (pid.ok()) RealProcessLauncher::Instance().Wait(*pid);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

struct JobTimes {
  double running_ms = 0;
  double succeeded_ms = 0;
};

Result<JobTimes> RunJob(const HttpJsonClient& server, int n) {
  Json spec{{"name", "bench-" + std::to_string(n)},
            {"roles", {{"worker", {{"instances", n}, {"cpus", 0.1}, {"memory", "16M"}, {"command", "/bin/true"}}}}}};
  int64_t submit_wall = SystemClock::Instance().WallMillis();
  auto start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(Json reply, server.Post("/api/v1/jobs", Json{{"spec", spec}, {"user", "bench"}}));
  std::string id = reply["id"];
  int64_t version = 0;
  while (true) {
    ASSIGN_OR_RETURN(Json job, server.Get("/api/v1/jobs/" + id + "?wait_version=" + std::to_string(version) + "&wait_ms=5000"));
    version = job["version"];
    std::string state = job["state"];
    if (state == "SUCCEEDED") {
      JobTimes times;
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

int Main(int argc, char** argv) {
  std::string shoal = "build/shoal";
  int repeats = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--shoal") shoal = argv[i + 1];
    else if (flag == "--repeats") repeats = std::max(1, std::atoi(argv[i + 1]));
  }
  char home_template[] = "/tmp/shoal-bench-launch-XXXXXX";
  std::string home = mkdtemp(home_template);
  auto env = CurrentEnvironment();
  env["SHOAL_HOME"] = home;
  auto server_pid = RealProcessLauncher::Instance().Spawn(
      {.argv = {AbsolutePath(shoal), "server", "--home", home, "--port", "0", "--cpus", "64"},
       .env = env, .new_session = true});
  if (!server_pid.ok()) {
    std::fprintf(stderr, "bench_launch: %s\n", server_pid.status().message().c_str());
    return 1;
  }
  std::string url;
  for (int i = 0; i < 200 && url.empty(); ++i) {
    auto info = ReadFile(home + "/server.json");
    if (info.ok()) url = Json::parse(*info)["url"];
    else std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  HttpJsonClient server(url, 30'000);
  std::printf("Launch latency, median of %d runs (tasks run /bin/true)\n\n", repeats);
  std::printf("%6s %20s %22s %14s %18s\n", "tasks", "submit->running ms", "submit->succeeded ms", "shell ms",
              "succeeded/shell");
  int code = 0;
  for (int n : {1, 4, 16}) {
    std::vector<double> running, succeeded, shell;
    for (int r = 0; r < repeats; ++r) {
      auto times = RunJob(server, n);
      if (!times.ok()) {
        std::fprintf(stderr, "bench_launch: %s\n", times.status().message().c_str());
        code = 1;
        break;
      }
      running.push_back(times->running_ms);
      succeeded.push_back(times->succeeded_ms);
      shell.push_back(ShellMillis(n));
    }
    double base = std::max(Median(shell), 0.001);
    std::printf("%6d %20.1f %22.1f %14.1f %17.1fx\n", n, Median(running), Median(succeeded), base, Median(succeeded) / base);
  }
  RealProcessLauncher::Instance().Signal(*server_pid, SIGTERM);
  RealProcessLauncher::Instance().Wait(*server_pid);
  std::string cleanup = code == 0 ? "rm -rf " + home : "true";
  if (code != 0) std::fprintf(stderr, "bench_launch: state and logs kept in %s\n", home.c_str());
  if (std::system(cleanup.c_str()) != 0) std::fprintf(stderr, "bench_launch: could not remove %s\n", home.c_str());
  return code;
}

}  // namespace
}  // namespace shoal

int main(int argc, char** argv) { return shoal::Main(argc, argv); }
