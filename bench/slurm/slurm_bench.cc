// bench/slurm: on a Slurm cluster, the time from submit until all 4 tasks of a job are
// running, for a Shoal job (`shoal server --cluster slurm`) against `sbatch` of a plain
// batch script asking for the same 4 tasks and starting them with srun, in one run.
//
//   scripts/slurm-up.sh
//   build/bench/slurm/bench_slurm [--shoal build/shoal] [--host 10.253.0.1] [--repeats 20]
//
// Shoal: a private server on --host (an address the nodes reach) submits a job of 4
// tasks (1 CPU, 256M each) running /bin/true through the REST API; "running" is the last
// task's program start as its container reported it. Plain: `sbatch --wait` of a script
// with the same resources whose `srun --ntasks=4` writes each task's start time. Both
// count from just before the submit call. Reported are the medians and their ratio, and,
// since each Shoal run follows a plain one, the median of the pairs' ratios and of the
// time Shoal adds.
#include <CLI/CLI.hpp>
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

constexpr int kTasks = 4;

// Submit -> the last task's start, for a job of the Shoal server.
Result<double> ShoalMillis(const HttpJsonClient& server) {
  Json spec{{"name", "bench-slurm"},
            {"roles", {{"worker", {{"instances", kTasks}, {"cpus", 1}, {"memory", "256M"}, {"command", "/bin/true"}}}}}};
  ASSIGN_OR_RETURN(BenchJobTimes times, RunBenchJob(server, spec));
  return times.running_ms;
}

// Submit -> the last task's start, for the plain batch script.
Result<double> PlainMillis(const std::string& dir, int run) {
  std::string out = dir + "/plain-" + std::to_string(run);
  RETURN_IF_ERROR(MakeDirectories(out));
  std::string script = "#!/bin/sh\n#SBATCH --job-name=bench-plain --output=/dev/null --no-requeue\n#SBATCH --ntasks=" +
                       std::to_string(kTasks) + " --cpus-per-task=1 --mem-per-cpu=256M\n" +
                       "srun --ntasks=" + std::to_string(kTasks) + " sh -c 'date +%s%3N > " + out +
                       "/start-$SLURM_PROCID'\n";
  RETURN_IF_ERROR(WriteFileAtomic(out + "/plain.sh", script));
  int64_t submit_wall = SystemClock::Instance().WallMillis();
  auto pid = RealProcessLauncher::Instance().Spawn(
      {.argv = {"sbatch", "--wait", "--quiet", out + "/plain.sh"}, .env = CurrentEnvironment()});
  if (!pid.ok()) return pid.status();
  if (!RealProcessLauncher::Instance().Wait(*pid).success()) return Internal("sbatch --wait of the plain script failed");
  int64_t last_start = 0;
  for (int t = 0; t < kTasks; ++t) {
    ASSIGN_OR_RETURN(std::string text, ReadFile(out + "/start-" + std::to_string(t)));
    last_start = std::max<int64_t>(last_start, std::atoll(text.c_str()));
  }
  return static_cast<double>(last_start - submit_wall);
}

int Main(int argc, char** argv) {
  std::string shoal = "build/shoal";
  std::string host = "10.253.0.1";
  bool verbose = false;
  int repeats = 20;  // Slurm's own start latency swings by 0.3 s from job to job: few runs give noisy medians
  CLI::App app{"Submit -> all 4 tasks running on Slurm: a Shoal job against a plain sbatch of the same tasks, "
               "median of several runs and their ratio. Needs a Slurm cluster (scripts/slurm-up.sh)."};
  app.add_option("--shoal", shoal, "the shoal binary")->capture_default_str();
  app.add_option("--host", host, "the address Shoal's server listens on, which the nodes reach")->capture_default_str();
  app.add_flag("--verbose", verbose, "print each run's times");
  app.add_option("--repeats", repeats, "how many runs of each")->check(CLI::Range(1, 1000))->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  auto started = BenchServer::Start("bench-slurm", shoal, {"--cluster", "slurm", "--host", host});
  if (!started.ok()) {
    std::fprintf(stderr, "bench_slurm: %s (is Slurm up? scripts/slurm-up.sh)\n", started.status().message().c_str());
    return 1;
  }
  BenchServer& server = *started;
  int code = 0;
  std::vector<double> shoal_ms, plain_ms;
  for (int r = 0; r < repeats && code == 0; ++r) {
    auto plain = PlainMillis(server.home(), r);
    auto ours = plain.ok() ? ShoalMillis(server.client()) : Result<double>(plain.status());
    if (!ours.ok()) {
      std::fprintf(stderr, "bench_slurm: %s\n", ours.status().message().c_str());
      code = 1;
      break;
    }
    plain_ms.push_back(*plain);
    shoal_ms.push_back(*ours);
    if (verbose) std::fprintf(stderr, "run %d: shoal %.0f ms, plain %.0f ms\n", r + 1, *ours, *plain);
  }
  if (code == 0) {
    std::printf("Submit -> all %d tasks running on Slurm, median of %d runs\n\n", kTasks, repeats);
    std::printf("%16s %16s %10s %16s %16s\n", "shoal ms", "plain sbatch ms", "ratio", "pair ratio", "extra ms");
    double base = std::max(Median(plain_ms), 0.001);
    // Each Shoal run follows a plain one: the two see about the same Slurm latency, which
    // swings between runs; the median of the pairs' ratios and differences shows Shoal's
    // own part apart from that swing.
    std::vector<double> pair_ratios, extra_ms;
    for (size_t i = 0; i < shoal_ms.size(); ++i) {
      pair_ratios.push_back(shoal_ms[i] / std::max(plain_ms[i], 0.001));
      extra_ms.push_back(shoal_ms[i] - plain_ms[i]);
    }
    std::printf("%16.0f %16.0f %9.2fx %15.2fx %16.0f\n", Median(shoal_ms), base, Median(shoal_ms) / base,
                Median(pair_ratios), Median(extra_ms));
  }
  if (code != 0) server.keep_state();
  return code;
}

}  // namespace
}  // namespace shoal

int main(int argc, char** argv) { return shoal::Main(argc, argv); }
