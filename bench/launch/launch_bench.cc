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
// medians and the ratio shoal / shell, and what confining each task in a cgroup costs:
// the same jobs on a second server started with `--task-limits off`, in turns, and the
// difference of the medians per task.
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
  // The same jobs on two servers, one confining each task in a cgroup (where this host
  // allows it) and one not, taking turns so that both see the same machine.
  auto confined = BenchServer::Start("bench-launch", shoal, {"--cpus", "64"});
  auto unlimited = BenchServer::Start("bench-launch-unlimited", shoal, {"--cpus", "64", "--task-limits", "off"});
  for (auto* started : {&confined, &unlimited}) {
    if (!started->ok()) {
      std::fprintf(stderr, "bench_launch: %s\n", started->status().message().c_str());
      return 1;
    }
  }
  auto limits = confined->client().Get("/api/v1/cluster");
  std::string how = limits.ok() ? (*limits)["task_limits"].value("detail", "") : limits.status().message();
  std::printf("Launch latency, median of %d runs (tasks run /bin/true)\n%s\n\n", repeats, how.c_str());
  std::printf("%6s %20s %22s %14s %18s | %16s %16s %16s\n", "tasks", "submit->running ms", "submit->succeeded ms",
              "shell ms", "succeeded/shell", "no cgroups: run", "no cgroups: succ", "cgroups ms/task");
  int code = 0;
  for (int n : {1, 4, 16}) {
    std::vector<double> running, succeeded, shell, plain_running, plain;
    for (int r = 0; r < repeats && code == 0; ++r) {
      Json spec{{"name", "bench-" + std::to_string(n)},
                {"roles", {{"worker", {{"instances", n}, {"cpus", 1}, {"memory", "16M"}, {"command", "/bin/true"}}}}}};
      // Each goes first in every other run: the first job after a pause finds colder caches.
      Result<BenchJobTimes> times = Internal("not run"), without = Internal("not run");
      if (r % 2 == 0) {
        times = RunBenchJob(confined->client(), spec);
        if (times.ok()) without = RunBenchJob(unlimited->client(), spec);
      } else {
        without = RunBenchJob(unlimited->client(), spec);
        if (without.ok()) times = RunBenchJob(confined->client(), spec);
      }
      if (!times.ok()) without = times.status();
      if (!without.ok()) {
        std::fprintf(stderr, "bench_launch: %s\n", without.status().message().c_str());
        code = 1;
        break;
      }
      running.push_back(times->running_ms);
      succeeded.push_back(times->succeeded_ms);
      plain_running.push_back(without->running_ms);
      plain.push_back(without->succeeded_ms);
      shell.push_back(ShellMillis(n));
    }
    if (code != 0) break;
    double base = std::max(Median(shell), 0.001);
    std::printf("%6d %20.1f %22.1f %14.1f %17.1fx | %16.1f %16.1f %16.2f\n", n, Median(running), Median(succeeded), base,
                Median(succeeded) / base, Median(plain_running), Median(plain), (Median(succeeded) - Median(plain)) / n);
  }
  if (code != 0) {
    confined->keep_state();
    unlimited->keep_state();
  }
  return code;
}

}  // namespace
}  // namespace shoal

int main(int argc, char** argv) { return shoal::Main(argc, argv); }
