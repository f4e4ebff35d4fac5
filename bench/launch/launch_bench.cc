// bench/launch: how long Shoal takes to start and finish a job of N tasks running
// /bin/true, against starting the same N processes from a shell script, in one run.
//
//   build/bench/launch/bench_launch [--shoal build/shoal] [--repeats 10] [--image NAME]
//                                   [--tasks 1,4,16] [--task-cpus 1]
//
// --tasks picks the job sizes, --task-cpus each task's `cpus:` (its CPU quota: 0.01 is a
// millisecond in each 100, which the task's agent shares with its program).
//
// It starts a private Shoal server, submits jobs through the REST API, and reads:
//   submit->running:   from the submit call until the last task's program started
//                      (the tasks' own start times, as the containers reported them);
//   submit->succeeded: from the submit call until the API reports SUCCEEDED.
// The baseline is `sh -c 'for i in 1..N; do /bin/true & done; wait'`. Reported are
// medians and the ratio shoal / shell, and what confining each task in a cgroup costs:
// the same jobs on a second server started with `--task-limits off`, in turns, and the
// difference of the medians per task.
//
// With --image (an image in podman's storage with /bin/true, e.g. one that
// scripts/build-test-images.sh builds), a second table: the same jobs with `image:`
// against the same N containers started directly with runc on bundles over the same root
// (what Shoal's agents run), and `podman run --network host` for scale, in turns. The
// aim's ratio is what the image adds to a Shoal job per task over what runc itself takes
// per container.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "bench/common/bench_server.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/http_client.h"
#include "common/process.h"
#include "isolation/image_store.h"
#include "isolation/oci_bundle.h"

namespace shoal {
namespace {

double ShellMillis(int n) {
  std::string script = "for i in $(seq " + std::to_string(n) + "); do /bin/true & done; wait";
  auto start = std::chrono::steady_clock::now();
  auto pid = RealProcessLauncher::Instance().Spawn({.argv = {"/bin/sh", "-c", script}, .env = CurrentEnvironment()});
  if (pid.ok()) RealProcessLauncher::Instance().Wait(*pid);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// N containers of `true` started at once with runc, each on a bundle of its own over
// `rootfs`, until all have exited and been removed: what Shoal's agents do.
Result<double> RuncMillis(int n, const std::string& rootfs, const std::string& scratch) {
  auto& launcher = RealProcessLauncher::Instance();
  std::vector<RuncPaths> containers;
  for (int i = 0; i < n; ++i) {
    std::string dir = scratch + "/" + std::to_string(i);
    RETURN_IF_ERROR(MakeDirectories(dir));
    OciBundleSpec bundle{.rootfs = rootfs, .args = {"/bin/true"}, .env = {{"PATH", "/usr/bin:/bin"}}, .cwd = "/",
                         .host_uid = getuid(), .host_gid = getgid()};
    RETURN_IF_ERROR(WriteFileAtomic(dir + "/config.json", OciConfig(bundle).dump()));
    containers.push_back({.state_root = scratch + "/state", .log = scratch + "/runc.log", .bundle = dir,
                          .id = "bench-" + std::to_string(i), .pid_file = dir + "/pid"});
  }
  auto start = std::chrono::steady_clock::now();
  std::vector<pid_t> pids;
  for (const RuncPaths& c : containers) {
    ASSIGN_OR_RETURN(pid_t pid, launcher.Spawn({.argv = RuncRunArgv(c), .env = CurrentEnvironment()}));
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    if (ExitInfo exit = launcher.Wait(pid); !exit.success()) return Internal("runc run: " + exit.Describe());
  }
  for (const RuncPaths& c : containers) {
    ASSIGN_OR_RETURN(CapturedOutput removed, RunAndCapture(launcher, RuncDeleteArgv(c), 30'000));
    if (!removed.exit.success()) return Internal("runc delete: " + removed.text);
  }
  return Since(start);
}

// N `podman run --runtime runc --rm --network host IMAGE true` at once (runc, as Shoal
// uses: crun refuses hybrid cgroup layouts; and with limits root may set: this
// kind of machine denies root CAP_SYS_RESOURCE, and podman's defaults ask for more).
Result<double> PodmanMillis(int n, const std::string& image) {
  auto& launcher = RealProcessLauncher::Instance();
  auto start = std::chrono::steady_clock::now();
  std::vector<pid_t> pids;
  for (int i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(pid_t pid, launcher.Spawn({.argv = {"podman", "run", "--runtime", "runc", "--rm", "--network", "host", "--ulimit", "nofile=20000:20000",
                                                          "--ulimit", "nproc=32768:32768", image, "/bin/true"},
                                                .env = CurrentEnvironment()}));
    pids.push_back(pid);
  }
  bool failed = false;
  for (pid_t pid : pids) failed = !launcher.Wait(pid).success() || failed;
  if (failed) return Internal("podman run failed");
  return Since(start);
}

// The images table: Shoal with and without `image:` (both confined), runc and podman alone.
int ImageTable(BenchServer& confined, const std::string& image, int repeats, const std::vector<int>& sizes) {
  std::string scratch = "/tmp/shoal-bench-launch-images-" + std::to_string(getpid());
  ImageStore store({.cache_dir = scratch + "/cache"}, RealProcessLauncher::Instance());
  JobSpec resolved;
  resolved.image = ImageSpec{image, "", ""};
  if (Status s = store.Resolve(resolved); !s.ok()) {
    std::fprintf(stderr, "bench_launch: --image: %s\n", s.message().c_str());
    return 2;
  }
  std::printf("\nIn image %s, median of %d runs\n\n", image.c_str(), repeats);
  std::printf("%6s %22s %22s %18s %14s %16s | %16s\n", "tasks", "image: succeeded ms", "no image: succeeded ms",
              "image ms/task", "runc ms", "runc ms/task", "podman run ms");
  int code = 0;
  for (int n : sizes) {
    std::vector<double> with, without, runc, podman;
    Json job{{"name", "bench-image-" + std::to_string(n)},
             {"roles", {{"worker", {{"instances", n}, {"cpus", 1}, {"memory", "64M"}, {"command", "/bin/true"}}}}}};
    Json in_image = job;
    in_image["image"] = image;
    for (int r = 0; r < repeats && code == 0; ++r) {
      auto a = RunBenchJob(confined.client(), in_image);
      auto b = RunBenchJob(confined.client(), job);
      auto c = RuncMillis(n, resolved.image->rootfs, scratch + "/runc-" + std::to_string(n) + "-" + std::to_string(r));
      auto d = PodmanMillis(n, image);
      for (const Status& s : {a.status(), b.status(), c.status()}) {
        if (!s.ok() && code == 0) {
          std::fprintf(stderr, "bench_launch: %s\n", s.message().c_str());
          code = 1;
        }
      }
      if (code != 0) break;
      with.push_back(a->succeeded_ms);
      without.push_back(b->succeeded_ms);
      runc.push_back(*c);
      if (d.ok()) podman.push_back(*d);
    }
    if (code != 0) break;
    double added = (Median(with) - Median(without)) / n;
    std::printf("%6d %22.1f %22.1f %18.2f %14.1f %16.2f | %16s   image adds %.2fx runc's own time per task\n", n,
                Median(with), Median(without), added, Median(runc), Median(runc) / n,
                podman.empty() ? "failed" : std::to_string(static_cast<int>(Median(podman))).c_str(),
                added / std::max(Median(runc) / n, 0.001));
  }
  std::error_code ignored;
  std::filesystem::remove_all(scratch, ignored);
  return code;
}

// "1,4,16": the job sizes, each a whole number from 1 to 10,000; empty when the text is not that.
std::vector<int> ParseSizes(const std::string& text) {
  std::vector<int> sizes;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = std::min(text.find(',', start), text.size());
    std::string item = text.substr(start, end - start);
    char* rest = nullptr;
    long n = std::strtol(item.c_str(), &rest, 10);
    if (item.empty() || *rest != '\0' || n < 1 || n > 10'000) return {};
    sizes.push_back(static_cast<int>(n));
    start = end + 1;
  }
  return sizes;
}

int Main(int argc, char** argv) {
  std::string shoal = "build/shoal";
  std::string image;
  int repeats = 10;
  std::vector<int> sizes = {1, 4, 16};
  double task_cpus = 1;
  for (int i = 1; i < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--help" || flag == "-h" || i + 1 >= argc) {
      std::printf("usage: bench_launch [--shoal build/shoal] [--repeats 10] [--image NAME] [--tasks 1,4,16] [--task-cpus 1]\n");
      return flag == "--help" || flag == "-h" ? 0 : 2;
    }
    if (flag == "--shoal") shoal = argv[i + 1];
    else if (flag == "--repeats") repeats = std::max(1, std::atoi(argv[i + 1]));
    else if (flag == "--image") image = argv[i + 1];
    else if (flag == "--tasks") {
      sizes = ParseSizes(argv[i + 1]);
      if (sizes.empty()) {
        std::fprintf(stderr, "bench_launch: --tasks %s: give job sizes from 1 to 10000, e.g. 1,4,16\n", argv[i + 1]);
        return 2;
      }
    } else if (flag == "--task-cpus") {
      char* rest = nullptr;
      task_cpus = std::strtod(argv[i + 1], &rest);
      if (*rest != '\0' || !(task_cpus >= 0.001 && task_cpus <= 64)) {
        std::fprintf(stderr, "bench_launch: --task-cpus %s: give a number of CPUs from 0.001 to 64, e.g. 0.01\n", argv[i + 1]);
        return 2;
      }
    } else {
      std::fprintf(stderr, "bench_launch: unknown flag %s; see --help\n", flag.c_str());
      return 2;
    }
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
  std::printf("Launch latency, median of %d runs (tasks run /bin/true, %g CPUs each)\n%s\n\n", repeats, task_cpus,
              how.c_str());
  std::printf("%6s %20s %22s %14s %18s | %16s %16s %16s\n", "tasks", "submit->running ms", "submit->succeeded ms",
              "shell ms", "succeeded/shell", "no cgroups: run", "no cgroups: succ", "cgroups ms/task");
  int code = 0;
  for (int n : sizes) {
    std::vector<double> running, succeeded, shell, plain_running, plain;
    for (int r = 0; r < repeats && code == 0; ++r) {
      Json spec{{"name", "bench-" + std::to_string(n)},
                {"roles",
                 {{"worker", {{"instances", n}, {"cpus", task_cpus}, {"memory", "16M"}, {"command", "/bin/true"}}}}}};
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
  if (code == 0 && !image.empty()) code = ImageTable(*confined, image, repeats, sizes);
  if (code != 0) {
    confined->keep_state();
    unlimited->keep_state();
  }
  return code;
}

}  // namespace
}  // namespace shoal

int main(int argc, char** argv) { return shoal::Main(argc, argv); }
