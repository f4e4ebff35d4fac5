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

#include "bench/common/bench_server.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/http_client.h"
#include "common/process.h"

namespace shoal {
namespace {

double ShellMillis(int n) {
  std::string script = "for i in $(seq " + std::to_string(n) + "); do /bin/true & done; wait";
  auto start = std::chrono::steady_clock::now();
  auto pid = RealProcessLauncher::Instance().Spawn({.argv = {"/bin/sh", "-c", script}, .env = CurrentEnvironment()});
  if (pid.ok()) RealProcessLauncher::Instance().Wait(*pid);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

int Main(int argc, char** argv) {
  std::string shoal = "build/shoal";
  int repeats = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--shoal") shoal = argv[i + 1];
    else if (flag == "--repeats") repeats = std::max(1, std::atoi(argv[i + 1]));
  }
  auto started = BenchServer::Start("bench-launch", shoal, {"--cpus", "64"});
  if (!started.ok()) {
    std::fprintf(stderr, "bench_launch: %s\n", started.status().message().c_str());
    return 1;
  }
  BenchServer& server = *started;
  std::printf("Launch latency, median of %d runs (tasks run /bin/true)\n\n", repeats);
  std::printf("%6s %20s %22s %14s %18s\n", "tasks", "submit->running ms", "submit->succeeded ms", "shell ms",
              "succeeded/shell");
  int code = 0;
  for (int n : {1, 4, 16}) {
    std::vector<double> running, succeeded, shell;
    for (int r = 0; r < repeats; ++r) {
      Json spec{{"name", "bench-" + std::to_string(n)},
                {"roles", {{"worker", {{"instances", n}, {"cpus", 0.1}, {"memory", "16M"}, {"command", "/bin/true"}}}}}};
      auto times = RunBenchJob(server.client(), spec);
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
  if (code != 0) server.keep_state();
  return code;
}

}  // namespace
}  // namespace shoal

int main(int argc, char** argv) { return shoal::Main(argc, argv); }
