// bench/scale: one job of N tasks (10,000 by default) on a simulated cluster, through the
// real server core, the real AM and the real agent protocol.
//
//   build/bench/scale/bench_scale [--tasks N] [--heartbeat-ms 1000] [--beat-seconds 10]
//                                 [--agent-threads 16]
//
// Method. This process runs the server core as `shoal server` does (JobManager, its SQLite
// history, the REST API with its tokens, on a loopback port; the system clock) over
// ForkedAmBackend, which starts the attempt's AM as a process of its own (`bench_scale am`,
// a real ApplicationMaster). The AM's containers are SimulatedAgents in this process: a
// pool of threads speaking the real agent protocol over real HTTP for every task
// (register, cluster long poll, started, heartbeats with a resource sample and progress,
// exit reports). The job is pytorch, one role `worker` of N tasks with tolerate_failure,
// max_attempts 1. Phases, each timed with the steady clock in this process:
//   1. submit -> every task registered (the agents' register calls answered), and -> every
//      task running (started reported);
//   2. heartbeats for --beat-seconds: each task one per --heartbeat-ms, spread over the
//      interval; the round trips as the agents see them (p50, p99, max), the rate reached,
//      and the AM's CPU over the window (its cores);
//   3. one task fails (exit 3): its exit report's round trip, then until the server's job
//      view shows it FAILED, the job going on (the role tolerates failures);
//   4. kill of the whole job (JobManager::Kill, as DELETE /api/v1/jobs/J): until every
//      simulated agent was told to stop (a stop from the AM's launcher or a heartbeat reply),
//      until every container ended, and until the job is KILLED.
// The AM's CPU seconds and peak RSS are the kernel's for its process alone (/proc while it
// runs, wait4's rusage at its end). The simulated agents and the server share the machine's
// cores with it, so the times include their competition. The last line is
//   N tasks: registered in S s, heartbeat p99 M ms, AM peak RSS R MB
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "bench/scale/am_process.h"
#include "bench/scale/forked_am_backend.h"
#include "bench/scale/simulated_agents.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/gated_http_server.h"
#include "common/http_server.h"
#include "runtime/framework.h"
#include "server/api.h"
#include "server/job_manager.h"
#include "server/long_polls.h"
#include "server/request_metrics.h"
#include "server/server_auth.h"
#include "server/server_hooks.h"
#include "spec/spec_parser.h"

namespace shoal::bench {
namespace {

struct Flags {
  int tasks = 10'000;
  int heartbeat_ms = 1000;
  int beat_seconds = 10;
  int agent_threads = 16;
};

constexpr char kUsage[] =
    "usage: bench_scale [--tasks N] [--heartbeat-ms MS] [--beat-seconds S] [--agent-threads T]\n"
    "One job of N tasks (default 10000) on a simulated cluster: the real server core and AM,\n"
    "agents simulated in process over the real protocol. Reports submit -> registered,\n"
    "heartbeat round trips, one task failing, a kill of the job, and the AM's CPU and memory.\n";

using SteadyClock = std::chrono::steady_clock;

double SecondsSince(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

int64_t SteadyMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now().time_since_epoch()).count();
}

// Waits (up to `seconds`) until done() holds, looking every `step_ms`.
template <typename F>
bool WaitUntil(F done, double seconds, int step_ms = 5) {
  auto start = SteadyClock::now();
  while (!done()) {
    if (SecondsSince(start) > seconds) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(step_ms));
  }
  return true;
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t i = static_cast<size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(i, values.size() - 1)];
}

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

// The server core of `shoal server`, in this process.
class Server {
 public:
  Server(const std::string& home, ClusterBackend& backend)
      : auth_(ServerAuth::WithToken("bench-scale-token", true)),
        store_(std::move(JobStore::Open(home + "/shoal.db").value())),
        series_(std::move(SeriesStore::Open(home + "/shoal.db").value())),
        http_(8) {
    int port = BindServer(http_, "127.0.0.1", 0).value();
    url_ = "http://127.0.0.1:" + std::to_string(port);
    jobs_ = std::make_unique<JobManager>(*store_, *series_, backend, SystemClock::Instance(), url_, home);
    http_.set_parking_rule(ParkJobWaits(*jobs_));
    jobs_->set_change_listener([this] { http_.WakeParked(); });
    jobs_->set_attempt_tokens([this](const std::string& job, int attempt) { return auth_.AttemptToken(job, attempt); });
    InstallServerHooks(http_, auth_, metrics_, home + "/token");
    InstallApi(http_, ApiContext{*jobs_, auth_, metrics_, "local", [] {}});
    (void)jobs_->Start();
    (void)WriteFileAtomic(home + "/server.json", Json{{"url", url_}, {"pid", getpid()}, {"home", home}}.dump());
    listener_ = ServeInBackground(http_);
  }
  ~Server() {
    http_.stop();
    listener_.join();
    jobs_->Stop();
  }
  JobManager& jobs() { return *jobs_; }

 private:
  ServerAuth auth_;
  std::unique_ptr<JobStore> store_;
  std::unique_ptr<SeriesStore> series_;
  RequestMetrics metrics_;
  // Made once the server's port is known; declared before the server, which its
  // parked polls and its workers' handlers use until the server is destroyed.
  std::unique_ptr<JobManager> jobs_;
  GatedHttpServer http_;
  std::string url_;
  std::thread listener_;
};

std::string JobYaml(int tasks) {
  return "name: scale\nframework: pytorch\nmax_attempts: 1\nroles:\n  worker:\n    instances: " + std::to_string(tasks) +
         "\n    cpus: 1\n    memory: 64M\n    tolerate_failure: true\n    command: /bin/true\n";
}

// The state of task worker[index] in the job's latest attempt, as the server shows it.
std::string TaskState(JobManager& jobs, const std::string& id, int index) {
  auto detail = jobs.Get(id, 0, 0);
  if (!detail.ok() || !(*detail)["attempts"].is_array() || (*detail)["attempts"].empty()) return "";
  const Json& tasks = (*detail)["attempts"].back()["tasks"];
  for (const Json& task : tasks) {
    if (task.value("index", -1) == index) return task.value("state", "");
  }
  return "";
}

std::string JobState(JobManager& jobs, const std::string& id) {
  auto detail = jobs.Get(id, 0, 0);
  return detail.ok() ? detail->value("state", "") : "";
}

void PrintUsage(const char* when, const AmUsage& usage) {
  std::printf("  AM (pid %d) %s: %.2f CPU s, peak RSS %.0f MB\n", usage.pid, when, usage.cpu_seconds,
              static_cast<double>(usage.peak_rss_bytes) / (1 << 20));
}

int Run(const Flags& flags) {
  std::string home = "/tmp/shoal-bench-scale-" + std::to_string(getpid());
  std::filesystem::remove_all(home);
  (void)MakeDirectories(home + "/jobs");
  std::printf("bench_scale: %d tasks, heartbeat every %d ms, %d agent threads; load average %s, %u cores\n",
              flags.tasks, flags.heartbeat_ms, flags.agent_threads, LoadAverage().c_str(),
              std::thread::hardware_concurrency());
  std::error_code ignored;
  std::string self = std::filesystem::read_symlink("/proc/self/exe", ignored).string();
  SimulatedAgents agents(flags.agent_threads, flags.tasks, flags.heartbeat_ms);
  ForkedAmBackend backend(agents, self, flags.heartbeat_ms, flags.tasks);
  Server server(home, backend);
  ParseOptions options;
  options.source_name = "job.yaml";
  options.base_dir = home;
  options.known_frameworks = KnownFrameworks();
  auto parsed = ParseJobSpec(JobYaml(flags.tasks), options);
  if (!parsed.ok()) {
    std::fprintf(stderr, "bench_scale: %s\n", parsed.status().ToString().c_str());
    return 1;
  }
  const int n = flags.tasks;
  // 1. Submit -> registered -> running.
  auto submitted = SteadyClock::now();
  auto id = server.jobs().Submit(std::move(parsed->spec));
  if (!id.ok()) {
    std::fprintf(stderr, "bench_scale: submit: %s\n", id.status().ToString().c_str());
    return 1;
  }
  // Gives up early when the job ended (its message says why).
  int looks = 0;
  auto over = [&] { return ++looks % 200 == 0 && backend.Usage().ended; };
  bool registered = WaitUntil([&] { return agents.registered() == n || over(); }, 300) && agents.registered() == n;
  double registered_s = SecondsSince(submitted);
  bool running = registered && WaitUntil([&] { return agents.running() == n || over(); }, 300) && agents.running() == n;
  double running_s = SecondsSince(submitted);
  std::printf("submit -> all %d registered: %.2f s%s; -> all running: %.2f s%s (launched %d, errors %lld)\n", n,
              registered_s, registered ? "" : " (TIMED OUT)", running_s, running ? "" : " (TIMED OUT)",
              agents.launched(), static_cast<long long>(agents.errors()));
  PrintUsage("after the start", backend.Usage());
  if (!running) {
    auto detail = server.jobs().Get(*id, 0, 0);
    if (detail.ok()) std::fprintf(stderr, "bench_scale: the job is %s: %s\n", detail->value("state", "").c_str(),
                                  detail->value("message", "").c_str());
    return 1;
  }

  // 2. Heartbeats.
  AmUsage before = backend.Usage();
  int64_t beats_before = agents.heartbeats();
  auto window = SteadyClock::now();
  agents.Record(true);
  std::this_thread::sleep_for(std::chrono::seconds(flags.beat_seconds));
  agents.Record(false);
  double window_s = SecondsSince(window);
  AmUsage after = backend.Usage();
  std::vector<double> beats = agents.HeartbeatMillis();
  double p50 = Percentile(beats, 0.5), p99 = Percentile(beats, 0.99), max = Percentile(beats, 1.0);
  std::printf("heartbeats over %.1f s: %zu recorded (%.0f/s of %.0f/s asked), round trip p50 %.1f ms, p99 %.1f ms, "
              "max %.1f ms; AM CPU %.2f cores\n",
              window_s, beats.size(), static_cast<double>(agents.heartbeats() - beats_before) / window_s,
              1000.0 * n / flags.heartbeat_ms, p50, p99, max, (after.cpu_seconds - before.cpu_seconds) / window_s);
  PrintUsage("after the heartbeats", after);

  // 3. One task fails.
  int failing = n / 2;
  agents.Fail("worker", failing, 3);
  int64_t fail_asked = SteadyMillis();
  bool reported = WaitUntil([&] { return agents.failure_reported_ms() != 0; }, 60);
  bool shown = reported && WaitUntil([&] { return TaskState(server.jobs(), *id, failing) == "FAILED"; }, 60, 20);
  int64_t shown_ms = SteadyMillis();
  std::printf("worker[%d] exits 3: its agent's turn came after %lld ms, the exit report was answered in %lld ms; FAILED in "
              "the server's view %lld ms after that%s; the job is %s (tolerate_failure)\n",
              failing, static_cast<long long>(agents.failure_sent_ms() - fail_asked),
              static_cast<long long>(agents.failure_reported_ms() - agents.failure_sent_ms()),
              static_cast<long long>(shown_ms - agents.failure_reported_ms()), shown ? "" : " (TIMED OUT)",
              JobState(server.jobs(), *id).c_str());

  // 4. Kill the job.
  auto killed_at = SteadyClock::now();
  int64_t kill_ms = SteadyMillis();
  auto kill = server.jobs().Kill(*id);
  if (!kill.ok()) std::fprintf(stderr, "bench_scale: kill: %s\n", kill.status().ToString().c_str());
  bool all_ended = WaitUntil([&] { return agents.ended() == n; }, 300);
  double ended_s = SecondsSince(killed_at);
  bool job_killed = WaitUntil([&] { return JobState(server.jobs(), *id) == "KILLED"; }, 300, 20);
  double job_killed_s = SecondsSince(killed_at);
  std::printf("kill: all %d live agents told to stop in %.2f s, every container ended in %.2f s%s, job %s in %.2f s%s\n",
              agents.told_to_stop(), static_cast<double>(agents.last_told_ms() - kill_ms) / 1000, ended_s,
              all_ended ? "" : " (TIMED OUT)", JobState(server.jobs(), *id).c_str(), job_killed_s,
              job_killed ? "" : " (TIMED OUT)");
  WaitUntil([&] { return backend.Usage().ended; }, 60);
  AmUsage final_usage = backend.Usage();
  PrintUsage("at its end (wait4)", final_usage);
  std::printf("heartbeat errors and failed calls: %lld\n", static_cast<long long>(agents.errors()));
  std::filesystem::remove_all(home, ignored);
  std::printf("%d tasks: registered in %.2f s, heartbeat p99 %.1f ms, AM peak RSS %.0f MB\n", n, registered_s, p99,
              static_cast<double>(final_usage.peak_rss_bytes) / (1 << 20));
  return registered && all_ended && job_killed ? 0 : 1;
}

}  // namespace
}  // namespace shoal::bench

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "am") == 0) return shoal::bench::RunAmProcess(argc - 1, argv + 1);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  shoal::bench::Flags flags;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::fputs(shoal::bench::kUsage, stdout);
      return 0;
    }
    int* target = flag == "--tasks" ? &flags.tasks
                  : flag == "--heartbeat-ms" ? &flags.heartbeat_ms
                  : flag == "--beat-seconds" ? &flags.beat_seconds
                  : flag == "--agent-threads" ? &flags.agent_threads
                                              : nullptr;
    if (!target || i + 1 >= argc || std::atoi(argv[i + 1]) <= 0) {
      std::fprintf(stderr, "bench_scale: bad argument '%s'\n%s", argv[i], shoal::bench::kUsage);
      return 2;
    }
    *target = std::atoi(argv[++i]);
  }
  return shoal::bench::Run(flags);
}
