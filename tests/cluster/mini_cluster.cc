#include "tests/cluster/mini_cluster.h"

#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <map>
#include <vector>

#include "common/files.h"
#include "common/gated_http_server.h"
#include "common/http_server.h"
#include "container/container_command.h"
#include "master/application_master.h"
#include "runtime/framework.h"
#include "server/api.h"
#include "server/long_polls.h"
#include "server/server_hooks.h"
#include "spec/spec_parser.h"
#include "tests/cluster/link_proxy.h"

namespace shoal::testing {
namespace {

// Runs `run` (an agent's or an AM's Run) on a new thread: its exit code lands in `exit`
// under `mutex`, and then `changed` is told, as a pidfd would tell of a process's end.
std::thread RunOnThread(std::function<int()> run, std::mutex& mutex, std::optional<ExitInfo>& exit,
                        const std::function<void()>& changed) {
  return std::thread([run = std::move(run), &mutex, &exit, &changed] {
    int code = run();
    {
      std::lock_guard lock(mutex);
      exit = ExitInfo{code, 0};
    }
    if (changed) changed();
  });
}

}  // namespace

// The links between agents and their AMs, one LinkProxy per launched agent; a task's name
// ("w0[0]") picks its newest.
class AgentLinks {
 public:
  // The address the agent of `task` is to use for its AM at `am_addr`.
  Result<std::string> Route(const std::string& task, const std::string& am_addr) {
    ASSIGN_OR_RETURN(std::unique_ptr<LinkProxy> link, LinkProxy::Start(am_addr));
    std::lock_guard lock(mutex_);
    newest_[task] = link.get();
    links_.push_back(std::move(link));
    return links_.back()->address();
  }
  void Set(const std::string& task, bool cut) {
    std::lock_guard lock(mutex_);
    if (auto it = newest_.find(task); it != newest_.end()) cut ? it->second->Cut() : it->second->Heal();
  }

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<LinkProxy>> links_;  // GUARDED_BY(mutex_)
  std::map<std::string, LinkProxy*> newest_;       // GUARDED_BY(mutex_)
};

// Runs each agent of one AM on a thread of its own.
class MiniLauncher final : public ContainerLauncher {
 public:
  MiniLauncher(ProcessLauncher& programs, const Clock& clock, AgentLinks& links)
      : programs_(programs), clock_(clock), links_(links) {}
  ~MiniLauncher() override { StopAll(); }
  // Stops every agent and waits for its thread: after it, no agent calls the AM's change
  // callback again (the AM it wakes may be about to go).
  void StopAll() {
    for (auto& [id, agent] : agents_) {
      agent->agent->RequestStop();
      if (agent->thread.joinable()) agent->thread.join();
    }
  }
  Result<std::string> Launch(const ContainerLaunch& launch) override {
    std::vector<std::string> args(launch.argv.begin() + 1, launch.argv.end());  // from "container" on
    std::string task = launch.role + "[" + std::to_string(launch.index) + "]";
    for (size_t i = 0; i + 1 < args.size(); ++i) {
      if (args[i] != "--am") continue;
      ASSIGN_OR_RETURN(args[i + 1], links_.Route(task, args[i + 1]));
    }
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    ASSIGN_OR_RETURN(ContainerOptions options, ParseContainerArgs(static_cast<int>(argv.size()), argv.data(), launch.env));
    options.stop_grace_ms = 200;
    options.max_wait_ms = 2;
    std::string id = "mini-" + launch.role + "-" + std::to_string(launch.index) + "-" + std::to_string(launch.attempt);
    auto agent = std::make_unique<Agent>();
    agent->agent = std::make_unique<ContainerAgent>(options, programs_, clock_);
    ContainerAgent* raw = agent->agent.get();
    agent->thread = RunOnThread([raw] { return raw->Run(); }, mutex_, agent->exit, changed_);
    std::lock_guard lock(mutex_);
    agents_[id] = std::move(agent);
    return id;
  }
  void Stop(const std::string& id, int) override { Kill(id); }
  void Kill(const std::string& id) override {
    std::lock_guard lock(mutex_);
    if (auto it = agents_.find(id); it != agents_.end()) it->second->agent->RequestStop();
  }
  std::vector<std::pair<std::string, ExitInfo>> Poll() override {
    std::vector<std::pair<std::string, ExitInfo>> ended;
    std::lock_guard lock(mutex_);
    for (auto& [id, agent] : agents_) {
      if (agent->exit && !agent->reported) {
        agent->reported = true;
        ended.emplace_back(id, *agent->exit);
      }
    }
    return ended;
  }
  std::string Host() const override { return "127.0.0.1"; }
  void SetChangeCallback(std::function<void()> changed) override { changed_ = std::move(changed); }

 private:
  struct Agent {
    std::unique_ptr<ContainerAgent> agent;
    std::thread thread;
    std::optional<ExitInfo> exit;  // GUARDED_BY(mutex_)
    bool reported = false;
  };
  ProcessLauncher& programs_;
  const Clock& clock_;
  AgentLinks& links_;
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Agent>> agents_;
  std::function<void()> changed_;
};

// Runs each attempt's AM on a thread of its own; it outlives server restarts.
class MiniBackend final : public ClusterBackend {
 public:
  MiniBackend(ProcessLauncher& programs, ProcessLauncher& mpirun, const Clock& clock, AgentLinks& links)
      : programs_(programs), mpirun_(mpirun), clock_(clock), links_(links) {}
  ~MiniBackend() override {
    for (auto& [id, am] : ams_) {
      am->am->RequestKill("the mini cluster is shutting down");
      if (am->thread.joinable()) am->thread.join();
      // An abandoned AM's agents outlive its Run, as a killed AM's processes would; they
      // end before the AM is freed.
      am->launcher->StopAll();
    }
  }
  std::string name() const override { return "local"; }
  TaskLimitsNote TaskLimits() const override { return {false, "the mini cluster's tasks are threads"}; }
  std::vector<ClusterNode> Nodes() override { return {ClusterNode{"mini", "up", "", Capacity().total, std::nullopt}}; }
  ClusterCapacity Capacity() const override { return ClusterCapacity{{4, 8LL << 30, 0}, {4, 8LL << 30, 0}}; }
  Result<AttemptHandle> StartAttempt(const AttemptLaunch& launch) override {
    RETURN_IF_ERROR(MakeDirectories(launch.attempt_dir));
    AmOptions options;
    options.server_url = launch.server_url;
    options.server_info_path = launch.server_info;
    options.job_id = launch.job_id;
    options.attempt = launch.attempt;
    options.attempt_dir = launch.attempt_dir;
    options.attempt_token = launch.token;
    options.shoal_executable = "shoal";
    options.heartbeat_interval_ms = 100;
    options.stop_grace_ms = 300;
    auto am = std::make_unique<Am>();
    am->launcher = std::make_unique<MiniLauncher>(programs_, clock_, links_);
    am->am = std::make_unique<ApplicationMaster>(options, *am->launcher, clock_, mpirun_);
    ApplicationMaster* raw = am->am.get();
    am->thread = RunOnThread([raw] { return raw->Run(); }, mutex_, am->exit, changed_);
    std::string id = launch.job_id + "/" + std::to_string(launch.attempt);
    std::lock_guard lock(mutex_);
    ams_[id] = std::move(am);
    return AttemptHandle{id};
  }
  std::optional<ExitInfo> PollAttempt(const AttemptHandle& handle) override {
    std::lock_guard lock(mutex_);
    auto it = ams_.find(handle.backend_id);
    return it == ams_.end() ? std::optional<ExitInfo>(ExitInfo{255, 0}) : it->second->exit;
  }
  void KillAttempt(const AttemptLaunch&, const AttemptHandle& handle) override {
    Am* am = nullptr;
    {
      std::lock_guard lock(mutex_);
      if (auto it = ams_.find(handle.backend_id); it != ams_.end()) am = it->second.get();
    }
    if (am) am->am->RequestKill("killed by the user");
  }
  void CleanUpAttempt(const AttemptLaunch&) override {}
  bool AttemptAlive(const AttemptHandle& handle) const override {
    std::lock_guard lock(mutex_);
    auto it = ams_.find(handle.backend_id);
    return it != ams_.end() && !it->second->exit;
  }
  void SetChangeCallback(std::function<void()> changed) override { changed_ = std::move(changed); }
  void Abandon(const std::string& backend_id) {
    std::lock_guard lock(mutex_);
    if (auto it = ams_.find(backend_id); it != ams_.end()) it->second->am->Abandon();
  }

 private:
  struct Am {
    std::unique_ptr<MiniLauncher> launcher;
    std::unique_ptr<ApplicationMaster> am;
    std::thread thread;
    std::optional<ExitInfo> exit;  // GUARDED_BY(mutex_)
  };
  ProcessLauncher& programs_;
  ProcessLauncher& mpirun_;
  const Clock& clock_;
  AgentLinks& links_;
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Am>> ams_;
  std::function<void()> changed_;
};

namespace {

constexpr size_t kServerWorkers = 8;
constexpr char kAdminToken[] = "mini-cluster-server-token";
}  // namespace

MiniCluster::MiniCluster(const std::string& name, MiniClusterOptions options)
    : home_("/tmp/shoal-mini-" + name + "-" + std::to_string(getpid())), auth_(ServerAuth::WithToken(kAdminToken, true)) {
  std::filesystem::remove_all(home_);
  (void)MakeDirectories(home_);
  if (options.home_megabytes > 0) {
    std::string size = "size=" + std::to_string(options.home_megabytes) + "m";
    mounted_ = geteuid() == 0 && mount("tmpfs", home_.c_str(), "tmpfs", 0, size.c_str()) == 0;
    ready_ = mounted_;
  }
  (void)MakeDirectories(home_ + "/jobs");
  links_ = std::make_unique<AgentLinks>();
  backend_ = std::make_unique<MiniBackend>(programs_, mpirun_, clock_, *links_);
  store_ = std::move(JobStore::Open(home_ + "/shoal.db").value());
  series_ = std::move(SeriesStore::Open(home_ + "/shoal.db").value());
  StartServer();
}

MiniCluster::~MiniCluster() {
  clock_.Release();  // no test drives the time any more: what still waits on it ends
  StopServer();
  backend_.reset();  // ends every AM and agent
  links_.reset();
  series_.reset();
  store_.reset();
  if (mounted_) umount2(home_.c_str(), MNT_DETACH);
  std::filesystem::remove_all(home_);
}

void MiniCluster::StartServer() {
  http_ = std::make_unique<GatedHttpServer>(kServerWorkers);
  int port = BindServer(*http_, "127.0.0.1", 0).value();
  url_ = "http://127.0.0.1:" + std::to_string(port);
  jobs_ = std::make_unique<JobManager>(*store_, *series_, *backend_, clock_, url_, home_);
  http_->set_parking_rule(ParkJobWaits(*jobs_));
  jobs_->set_change_listener([http = http_.get()] { http->WakeParked(); });
  jobs_->set_attempt_tokens([this](const std::string& job, int attempt) { return auth_.AttemptToken(job, attempt); });
  InstallServerHooks(*http_, auth_, metrics_, home_ + "/token");
  InstallApi(*http_, ApiContext{*jobs_, auth_, metrics_, "local", [] {}});
  (void)jobs_->Start();
  (void)WriteFileAtomic(home_ + "/server.json", Json{{"url", url_}, {"pid", getpid()}, {"home", home_}}.dump());
  listener_ = ServeInBackground(*http_);
}

void MiniCluster::StopServer() {
  if (!http_) return;
  http_->stop();
  if (listener_.joinable()) listener_.join();
  jobs_->Stop();
  jobs_.reset();
  http_.reset();
}

void MiniCluster::RestartServer() {
  StopServer();
  StartServer();
}

HttpJsonClient MiniCluster::Api() const {
  HttpJsonClient client(url_);
  client.set_bearer_token(kAdminToken);
  return client;
}

void MiniCluster::Pass(int64_t millis, int64_t step) {
  for (int64_t passed = 0; passed < millis; passed += step) {
    clock_.Advance(step);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void MiniCluster::CutAgent(const std::string& task) { links_->Set(task, true); }
void MiniCluster::HealAgent(const std::string& task) { links_->Set(task, false); }

void MiniCluster::AbandonAm(const std::string& id, int attempt) { backend_->Abandon(id + "/" + std::to_string(attempt)); }

Result<std::string> MiniCluster::Submit(const std::string& yaml) {
  ParseOptions options;
  options.source_name = "job.yaml";
  options.base_dir = home_;
  options.known_frameworks = KnownFrameworks();
  ASSIGN_OR_RETURN(ParsedSpec parsed, ParseJobSpec(yaml, options));
  return jobs_->Submit(std::move(parsed.spec));
}

std::string MiniCluster::TaskLog(const std::string& id, int attempt, const std::string& task) const {
  auto text = ReadFile(home_ + "/jobs/" + id + "/attempt-" + std::to_string(attempt) + "/" + task + ".log");
  return text.ok() ? *text : "";
}

}  // namespace shoal::testing
