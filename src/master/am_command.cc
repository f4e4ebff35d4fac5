#include "master/am_command.h"

#include <signal.h>

#include <CLI/CLI.hpp>
#include <thread>

#include "backend/local/local_backend.h"
#include "backend/slurm/slurm_launcher.h"
#include "backend/slurm/slurm_preemption.h"
#include "common/log.h"
#include "common/termination.h"
#include "master/application_master.h"
#include "protocol/attempt_messages.h"

namespace shoal {

int AmCommand(int argc, char** argv, const std::function<std::unique_ptr<ProcessLauncher>()>& start_agent_launcher) {
  CLI::App app{"The application master of one job attempt. Backends start it; users do not."};
  AmOptions options;
  std::string backend = "local";
  app.add_option("--server", options.server_url, "the Shoal server's URL")->required();
  app.add_option("--job", options.job_id, "the job id")->required();
  app.add_option("--attempt", options.attempt, "the attempt number")->required();
  app.add_option("--dir", options.attempt_dir, "the attempt's directory (logs)")->required();
  app.add_option("--backend", backend, "the backend whose containers to start")->check(CLI::IsMember({"local", "slurm"}));
  app.add_option("--server-info", options.server_info_path,
                 "the server's server.json: where to look for the server when it stops answering");
  auto* bind = app.add_option("--bind", options.bind_host, "the address containers reach the AM on");
  std::string cgroup;
  app.add_option("--cgroup", cgroup, "the attempt's cgroup (local): each task gets a limited group below it");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  SetLogComponent("am " + options.job_id + "/" + std::to_string(options.attempt));
  // The attempt's token: taken out of the environment at once, so nothing the AM starts inherits it.
  if (const char* token = std::getenv(protocol::kAttemptTokenVariable); token && *token) options.attempt_token = token;
  unsetenv(protocol::kAttemptTokenVariable);
  options.shoal_executable = SelfExecutable();

  // Before any thread: the local backend's agents are forked from a helper started now.
  std::unique_ptr<ProcessLauncher> agents;
  if (backend == "local" && start_agent_launcher) agents = start_agent_launcher();

  // SIGTERM (shoal kill) and SIGINT end the attempt KILLED.
  BlockTerminationSignals();

  std::unique_ptr<ContainerLauncher> launcher;
  if (backend == "slurm") {
    // In a Slurm batch job: tasks are steps on their nodes, which reach the AM on its node's address.
    auto slurm = SlurmContainerLauncher::FromEnvironment(CurrentEnvironment(), RealSlurmCommands::Instance(),
                                                         RealProcessLauncher::Instance());
    if (!slurm.ok()) {
      LogError(slurm.status().ToString());
      return 2;
    }
    if (bind->count() == 0) options.bind_host = (*slurm)->Host();
    launcher = std::move(*slurm);
  } else {
    CgroupGroup attempt_group;
    if (!cgroup.empty()) {
      auto decoded = CgroupGroup::Decode(cgroup);
      if (!decoded.ok()) {
        LogError(decoded.status().ToString());
        return 2;
      }
      attempt_group = *decoded;
    }
    launcher = std::make_unique<LocalContainerLauncher>(agents ? *agents : RealProcessLauncher::Instance(),
                                                        std::move(attempt_group));
  }
  ApplicationMaster am(options, *launcher, SystemClock::Instance());
  if (backend == "slurm") {
    // Shoal's own kill is SIGUSR2 (scancel --batch --signal=USR2); a SIGTERM is Slurm's
    // (preemption, a scancel from outside Shoal), whose exact reason the server reads.
    OnSignal(SIGUSR2, [&am] { am.RequestKill("killed by the user"); });
    OnTermination([&am] {
      LogInfo("Slurm is ending this attempt (SIGTERM); asking Slurm whether it is a preemption");
      std::string preempted = SlurmPreemptionReason(RealSlurmCommands::Instance(), CurrentEnvironment()["SLURM_JOB_ID"]);
      if (!preempted.empty()) {
        am.RequestPreempt(preempted);
      } else {
        am.RequestFail("Slurm is ending this attempt (SIGTERM: a scancel from outside Shoal)");
      }
    });
    OnSignal(SIGUSR1, [&am] {  // Shoal's own --signal=B:USR1@N (slurm_job_options.h)
      am.RequestFail("Slurm's time limit for this attempt is near, so its tasks were stopped (SIGTERM, then SIGKILL "
                     "after the grace); fix: raise slurm.time (or timeouts.job, from which Shoal derives it)");
    });
  } else {
    OnTermination([&am] { am.RequestKill("killed by the user"); });
  }
  int code = am.Run();
  std::_Exit(code);  // the signal thread is parked in sigwait: leave without joining it
}

}  // namespace shoal
