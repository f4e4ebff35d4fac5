#include "server/server_command.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <thread>

#include "backend/local/local_backend.h"
#include "backend/slurm/slurm_backend.h"
#include "backend/slurm/slurm_job.h"
#include "common/files.h"
#include "common/gated_http_server.h"
#include "common/http_client.h"
#include "common/http_server.h"
#include "common/log.h"
#include "common/termination.h"
#include "common/token_file.h"
#include "common/paths.h"
#include "common/units.h"
#include "isolation/cgroup_control.h"
#include "isolation/image_store.h"
#include "isolation/unix_account.h"
#include "server/api.h"
#include "server/long_polls.h"
#include "server/job_accounts.h"
#include "server/server_auth.h"
#include "server/server_hooks.h"
#include "server/web_ui.h"

namespace shoal {
namespace {

// Threads that run handlers; connections and long polls wait in the gate, not here.
constexpr size_t kServerWorkers = 16;

int StopServer(const std::string& home) {
  auto text = ReadFile(ServerInfoPath(home));
  Json info = text.ok() ? Json::parse(*text, nullptr, false) : Json();
  if (!info.is_object() || !info.contains("url")) {
    std::fprintf(stderr, "shoal server: no server is running for %s\n", home.c_str());
    return 0;
  }
  int pid = info.value("pid", 0);
  std::string url = info["url"].get<std::string>();
  if (pid <= 0 || !ProcessRunning(pid)) {
    std::fprintf(stderr, "shoal server: the server recorded for %s (pid %d, %s) is not running; nothing to stop\n",
                 home.c_str(), pid, url.c_str());
    return 0;
  }
  HttpJsonClient client(url, 5000);
  client.set_bearer_token(ReadTokenFile(TokenPath(home)));
  auto stopped = client.Post("/api/v1/shutdown", Json::object());
  // A server listening beyond loopback (for a Slurm cluster's nodes, say) refuses the call
  // from a non-loopback address; it is this home's server on this machine: signal it.
  if (!stopped.ok()) {
    std::fprintf(stderr, "shoal server: the server at %s did not take the shutdown call (%s); sending it SIGTERM\n",
                 url.c_str(), stopped.status().message().c_str());
    kill(pid, SIGTERM);
  }
  for (int i = 0; i < 200 && ProcessRunning(pid); ++i) usleep(50'000);
  if (ProcessRunning(pid)) {
    std::fprintf(stderr, "shoal server: the server (pid %d) did not stop within 10 s\n", pid);
    return 1;
  }
  std::printf("stopped the server at %s (pid %d)\n",
              url.c_str(), pid);
  return 0;
}

}  // namespace

int ServerCommand(int argc, char** argv) {
  CLI::App app{"The Shoal server: the REST API, the web UI, the job history and the scheduler of the local cluster.\n"
               "`shoal run` starts one in the background when none is running."};
  std::string home = ShoalHome();
  std::string host = "127.0.0.1";
  int port = 7480;
  std::string cpus, memory;
  int gpus = -1;
  app.add_option("--home", home, "state directory: job history, logs (default $SHOAL_HOME or ~/.shoal)");
  app.add_option("--host", host, "address to listen on (default loopback only; beyond loopback every call needs a token, not only those that change state: docs/reliability.md)");
  auto* port_option = app.add_option("--port", port, "port to listen on (default 7480, or a free one when 7480 is taken); 0 picks a free one")
                          ->check(CLI::Range(0, 65535));
  app.add_option("--cpus", cpus, "CPUs the local cluster offers (default: this machine's cores)");
  app.add_option("--memory", memory, "memory the local cluster offers, e.g. 16G (default: this machine's)");
  app.add_option("--gpus", gpus, "GPUs the local cluster offers, numbered 0..N-1 (default: nvidia-smi's)")
      ->check(CLI::Range(0, 1024));
  std::string cluster = "local";
  SlurmOptions slurm;
  app.add_option("--cluster", cluster, "where jobs run: local (this machine) or slurm (docs/slurm.md)")
      ->check(CLI::IsMember({"local", "slurm"}));
  app.add_option("--slurm-partition", slurm.partition, "the Slurm partition jobs run in (default: the cluster's default)");
  app.add_option("--slurm-option", slurm.sbatch_options,
                 "one more sbatch option for every job, e.g. --account=ml (repeatable); a job's own slurm: option of the "
                 "same name replaces it unless locked");
  app.add_option("--slurm-lock", slurm.locked,
                 "a slurm: field jobs may not set, keeping this server's choice (repeatable): partition, account, qos, "
                 "time, constraint, reservation or extra")
      ->check(CLI::IsMember(SlurmLockableFields()));
  bool stop = false;
  std::string task_limits = "on";
  app.add_option("--task-limits", task_limits,
                 "on (default): hold each local task to its memory, CPUs and a process count in a cgroup of its own "
                 "where this host allows it (docs/isolation.md); off: run tasks unlimited")
      ->check(CLI::IsMember({"on", "off"}));
  std::string run_as, jobs_dir;
  app.add_option("--run-as", run_as,
                 "on a server started as root: the Unix account its owner's own jobs run as (default: root); other "
                 "users' jobs run as the account `shoal user add --unix-user` linked to them (docs/isolation.md)");
  app.add_option("--jobs-dir", jobs_dir,
                 "where each job's folder (logs, task folders) is made (default <home>/jobs); a root server that runs "
                 "jobs as other accounts needs one they can pass through, such as /var/lib/shoal/jobs");
  app.add_flag("--stop", stop, "stop the server running for --home (running jobs go on and are re-attached at restart)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  SetLogComponent("server");
  home = AbsolutePath(home);
  if (stop) return StopServer(home);

  ClusterCapacity capacity = DetectLocalCapacity();
  if (!cpus.empty()) {
    char* end = nullptr;
    double value = std::strtod(cpus.c_str(), &end);
    if (*end != '\0' || !(value > 0)) {
      std::fprintf(stderr, "shoal server: --cpus '%s' must be a number above 0, e.g. --cpus 8\n", cpus.c_str());
      return 2;
    }
    capacity.total.cpus = capacity.largest.cpus = value;
  }
  if (!memory.empty()) {
    auto bytes = ParseMemory(memory);
    if (!bytes.ok()) {
      std::fprintf(stderr, "shoal server: --memory: %s\n", bytes.status().message().c_str());
      return 2;
    }
    capacity.total.memory_bytes = capacity.largest.memory_bytes = *bytes;
  }
  if (gpus >= 0) capacity.total.gpus = capacity.largest.gpus = gpus;

  const bool as_root = geteuid() == 0;
  if (!run_as.empty()) {
    if (!as_root) {
      std::fprintf(stderr, "shoal server: --run-as needs a server started as root; this one runs every job as %s\n",
                   CurrentUserName().c_str());
      return 2;
    }
    if (auto account = LookUpAccount(run_as); !account.ok()) {
      std::fprintf(stderr, "shoal server: --run-as: %s\n", account.status().message().c_str());
      return 2;
    }
  }
  jobs_dir = jobs_dir.empty() ? home + "/jobs" : AbsolutePath(jobs_dir);
  if (Status s = MakeDirectories(jobs_dir); !s.ok()) {
    std::fprintf(stderr, "shoal server: %s\n", s.message().c_str());
    return 2;
  }
  // Each job's folder is its account's alone (mode 0700); the accounts pass through this
  // one to reach theirs and can list nothing in it.
  if (jobs_dir != home + "/jobs" && chmod(jobs_dir.c_str(), as_root ? 0711 : 0700) != 0) {
    std::fprintf(stderr, "shoal server: --jobs-dir %s: %s\n", jobs_dir.c_str(), std::strerror(errno));
    return 2;
  }
  // The home holds the token, the history with its secrets and every job's logs: its
  // owner's alone (docs/reliability.md, "Data at rest").
  if (struct stat st {}; stat(home.c_str(), &st) == 0 && st.st_uid == geteuid() && (st.st_mode & 0077) != 0 &&
                         chmod(home.c_str(), 0700) != 0) {
    LogError("cannot make the home " + home + " private (mode 0700): " + std::strerror(errno));
  }
  // One server per home: a second one would double-book the machine.
  int lock_fd = open((home + "/server.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd < 0 || flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    std::fprintf(stderr, "shoal server: another server is already running for %s; stop it with `shoal server --stop`\n",
                 home.c_str());
    return 1;
  }
  auto store = JobStore::Open(home + "/shoal.db");
  if (!store.ok()) {
    std::fprintf(stderr, "shoal server: %s\n", store.status().message().c_str());
    return 1;
  }
  auto series = SeriesStore::Open(home + "/shoal.db");
  if (!series.ok()) {
    std::fprintf(stderr, "shoal server: %s\n", series.status().message().c_str());
    return 1;
  }
  auto auth = ServerAuth::ForServer(host, home, CurrentUserName());
  if (!auth.ok()) {
    std::fprintf(stderr, "shoal server: %s\n", auth.status().message().c_str());
    return 1;
  }
  // The server's token stays in this process: AMs get tokens of their own attempt only.
  if (!auth->loopback()) {
    std::fprintf(stderr, "shoal server: listening beyond loopback on %s: requests need the token in %s\n", host.c_str(),
                 TokenPath(home).c_str());
  }
  BlockTerminationSignals();

  GatedHttpServer http(kServerWorkers, FitToOpenFileLimit(GateLimits{}));
  auto bound = BindServer(http, host, port);
  if (!bound.ok() && port_option->count() == 0) bound = BindServer(http, host, 0);  // the default port is taken
  if (!bound.ok()) {
    std::fprintf(stderr, "shoal server: %s\n", bound.status().message().c_str());
    return 1;
  }
  std::string url = "http://" + (host == "0.0.0.0" ? std::string("127.0.0.1") : host) + ":" + std::to_string(*bound);
  std::unique_ptr<ClusterBackend> backend;
  CgroupGroup jobs_group;  // the local backend's top cgroup: removed at exit unless attempts go on in it
  const std::string server_id = ServerId(HostName(), home);
  if (cluster == "slurm") {
    slurm.server_id = server_id;
    auto on_slurm = std::make_unique<SlurmBackend>(RealSlurmCommands::Instance(), SelfExecutable(), slurm,
                                                   SystemClock::Instance());
    if (Status s = on_slurm->Connect(); !s.ok()) {
      std::fprintf(stderr, "shoal server: --cluster slurm: %s\n", s.message().c_str());
      return 1;
    }
    capacity = on_slurm->Capacity();
    on_slurm->StartPolling();
    backend = std::move(on_slurm);
  } else {
    TaskIsolation isolation = task_limits == "on"
                                  ? PrepareTaskIsolation("shoal-" + server_id)
                                  : TaskIsolation{{}, "turned off by `shoal server --task-limits off`"};
    LogInfo(isolation.Describe());  // once, at start; the API and every job's status repeat it when not enforced
    jobs_group = isolation.jobs;
    backend = std::make_unique<LocalBackend>(capacity, SelfExecutable(), RealProcessLauncher::Instance(),
                                             std::move(isolation));
  }
  JobManager jobs(**store, **series, *backend, SystemClock::Instance(), url, home);
  http.set_parking_rule(ParkJobWaits(jobs));
  jobs.set_change_listener([&http] { http.WakeParked(); });
  jobs.set_attempt_tokens([&auth](const std::string& job, int attempt) { return auth->AttemptToken(job, attempt); });
  jobs.set_jobs_dir(jobs_dir);
  // Images: extracted once per image id beside the jobs' folders, where every job's account
  // may read them (docs/isolation.md, "Images").
  ImageStore images({.cache_dir = jobs_dir + "/.images"}, RealProcessLauncher::Instance());
  jobs.set_images([&images](JobSpec& spec) { return images.Resolve(spec); });
  {
    JobAccounts accounts({.server_is_root = as_root,
                          .server_owner = auth->owner(),
                          .run_as = run_as,
                          .jobs_dir = jobs_dir,
                          .linked = [&auth](const std::string& user) { return auth->UnixUserOf(user); }});
    jobs.set_accounts([accounts](const JobSpec& spec) { return accounts.AccountFor(spec); });
    LogInfo(as_root ? "each job runs as its owner's Unix account; the server owner's as " +
                          (run_as.empty() ? std::string("root") : run_as)
                    : "every job runs as " + CurrentUserName() + ", this server's own account: its users share one "
                      "Unix identity (docs/isolation.md)");
  }
  if (Status s = jobs.Start(); !s.ok()) {
    std::fprintf(stderr, "shoal server: %s\n", s.message().c_str());
    RemoveGroupIfUnused(jobs_group);  // a server that does not start leaves no cgroup behind
    return s.code() == StatusCode::kInvalidArgument ? 2 : 1;  // 2: a bad queues.yaml, the user's to fix
  }
  RequestMetrics requests;
  InstallServerHooks(http, *auth, requests, TokenPath(home));
  InstallApi(http, ApiContext{jobs, *auth, requests, backend->name(), [&http] { http.stop(); }});
  InstallWebUi(http, EmbeddedWebAssets());
  OnTermination([&http] { http.stop(); });
  Json info{{"url", url}, {"pid", getpid()}, {"home", home}};
  (void)WriteFileAtomic(ServerInfoPath(home), info.dump() + "\n");
  LogInfo("listening on " + url + " (" + backend->name() + ": " + capacity.total.ToString() + "), state in " + home + "; web UI at " + url + "/");
  http.listen_after_bind();
  LogInfo("stopping");
  unlink(ServerInfoPath(home).c_str());
  jobs.Stop();
  RemoveGroupIfUnused(jobs_group);
  std::_Exit(0);
}

}  // namespace shoal
