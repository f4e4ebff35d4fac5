#include "bench/scale/am_process.h"

#include <signal.h>
#include <sys/prctl.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench/scale/launch_pipe.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/termination.h"
#include "master/application_master.h"
#include "protocol/attempt_messages.h"

namespace shoal::bench {
namespace {

// A ContainerLauncher whose containers are the bench's simulated agents.
class PipeLauncher final : public ContainerLauncher {
 public:
  PipeLauncher() : reader_([this] { Read(); }) {}
  ~PipeLauncher() override { reader_.detach(); }  // blocked in read(): the process is ending

  Result<std::string> Launch(const ContainerLaunch& launch) override {
    std::string id = "sim-" + launch.role + "-" + std::to_string(launch.index) + "-" + std::to_string(launch.attempt);
    std::string am = ArgAfter(launch.argv, "--am");
    auto token = launch.env.find(protocol::kTaskTokenVariable);
    if (token == launch.env.end()) return Internal("no task token in the launch");
    if (!WriteLine(kToBenchFd, "launch " + id + " " + launch.role + " " + std::to_string(launch.index) + " " +
                                   token->second + " " + am)) {
      return Unavailable("the bench is gone");
    }
    return id;
  }
  void Stop(const std::string& id, int) override { (void)WriteLine(kToBenchFd, "stop " + id); }
  void Kill(const std::string& id) override { Stop(id, 0); }
  std::vector<std::pair<std::string, ExitInfo>> Poll() override {
    std::lock_guard lock(mutex_);
    return std::exchange(ended_, {});
  }
  std::string Host() const override { return "127.0.0.1"; }
  void SetChangeCallback(std::function<void()> changed) override {
    std::lock_guard lock(mutex_);
    changed_ = std::move(changed);
  }

 private:
  static std::string ArgAfter(const std::vector<std::string>& argv, const std::string& flag) {
    for (size_t i = 0; i + 1 < argv.size(); ++i) {
      if (argv[i] == flag) return argv[i + 1];
    }
    return "";
  }
  void Read() {
    ReadLines(kFromBenchFd, [this](const std::string& line) {
      std::vector<std::string> words = ParseLaunchLine(line);
      if (words.size() != 4 || words[0] != "ended") return;
      std::function<void()> changed;
      {
        std::lock_guard lock(mutex_);
        ended_.emplace_back(words[1], ExitInfo{std::atoi(words[2].c_str()), std::atoi(words[3].c_str())});
        changed = changed_;
      }
      if (changed) changed();
    });
  }

  std::mutex mutex_;
  std::vector<std::pair<std::string, ExitInfo>> ended_;  // GUARDED_BY(mutex_)
  std::function<void()> changed_;                        // GUARDED_BY(mutex_)
  std::thread reader_;
};

}  // namespace

int RunAmProcess(int argc, char** argv) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // a bench stopped half way leaves no AM behind
  AmOptions options;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--server") options.server_url = value;
    else if (flag == "--job") options.job_id = value;
    else if (flag == "--attempt") options.attempt = std::atoi(value.c_str());
    else if (flag == "--dir") options.attempt_dir = value;
    else if (flag == "--server-info") options.server_info_path = value;
    else if (flag == "--heartbeat-ms") options.heartbeat_interval_ms = std::atoi(value.c_str());
  }
  SetLogComponent("am " + options.job_id + "/" + std::to_string(options.attempt));
  if (const char* token = std::getenv(protocol::kAttemptTokenVariable)) options.attempt_token = token;
  unsetenv(protocol::kAttemptTokenVariable);
  options.shoal_executable = "shoal";
  BlockTerminationSignals();
  PipeLauncher launcher;
  ApplicationMaster am(options, launcher, SystemClock::Instance());
  OnTermination([&am] { am.RequestKill("killed by the user"); });
  int code = am.Run();
  std::_Exit(code);  // as `shoal am`: the signal thread is parked in sigwait
}

}  // namespace shoal::bench
