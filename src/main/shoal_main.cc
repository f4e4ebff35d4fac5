// shoal: one binary, many commands (like git). main only dispatches: the daemons' entry
// points (server, am, container) parse their own flags; the user commands are built here.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "client/client_context.h"
#include "client/global_options.h"
#include "client/job_commands.h"
#include "client/stack_command.h"
#include "client/queues_command.h"
#include "client/submit_command.h"
#include "client/user_command.h"
#include "common/fork_server.h"
#include "common/paths.h"
#include "container/container_command.h"
#include "master/am_command.h"
#include "master/mpi_agent_command.h"
#include "server/server_command.h"
#include "train/train_command.h"

int main(int argc, char** argv) {
  // --home may stand before or after the command (`shoal --home DIR server`, `shoal list
  // --home DIR`): it is read here, once, for every command.
  shoal::GlobalOptions global = shoal::SplitGlobalOptions(std::vector<std::string>(argv, argv + argc));
  if (global.home) setenv("SHOAL_HOME", global.home->c_str(), 1);  // ShoalHome() reads it, daemons included
  std::vector<char*> args;
  for (std::string& arg : global.rest) args.push_back(arg.data());
  args.push_back(nullptr);
  argc = static_cast<int>(global.rest.size());
  argv = args.data();
  if (argc >= 2) {
    if (std::strcmp(argv[1], "server") == 0) return shoal::ServerCommand(argc - 1, argv + 1);
    if (std::strcmp(argv[1], "am") == 0) {
      // The AM's agents are forked, not exec'd, from a helper (common/fork_server.h).
      return shoal::AmCommand(argc - 1, argv + 1, [] {
        auto agents = shoal::ForkServer::Start("container", [](std::vector<std::string> args) {
          std::vector<char*> command;
          for (std::string& arg : args) command.push_back(arg.data());
          command.push_back(nullptr);
          return shoal::ContainerCommand(static_cast<int>(args.size()), command.data());
        });
        return agents.ok() ? std::unique_ptr<shoal::ProcessLauncher>(std::move(agents).value()) : nullptr;
      });
    }
    if (std::strcmp(argv[1], "container") == 0) return shoal::ContainerCommand(argc - 1, argv + 1);
    if (std::strcmp(argv[1], "mpi-agent") == 0) return shoal::MpiAgentCommand(argc - 1, argv + 1);
    if (std::strcmp(argv[1], "train") == 0) return shoal::TrainCommand(argc - 1, argv + 1);
  }
  CLI::App app{"Shoal runs distributed deep-learning jobs on this machine or a cluster.\n\n"
               "  shoal run job.yaml        run a job and follow it\n"
               "  shoal list                the jobs\n"
               "  shoal status JOB          one job's tasks and state\n"
               "  shoal logs JOB -f         a task's output\n"
               "  shoal server              the long-running service (`shoal run` starts one for you)\n\n"
               "Docs: README.md and docs/ in the Shoal source tree."};
  app.require_subcommand(1);
  shoal::ClientContext ctx;
  ctx.home = shoal::ShoalHome();
  // Listed for --help; SplitGlobalOptions has already taken it wherever it stood.
  app.add_option("--home", ctx.home, "state directory (default $SHOAL_HOME or ~/.shoal); before or after the command");
  shoal::AddRunCommand(app, ctx);
  shoal::AddSubmitCommand(app, ctx);
  shoal::AddStatusCommand(app, ctx);
  shoal::AddListCommand(app, ctx);
  shoal::AddLogsCommand(app, ctx);
  shoal::AddKillCommand(app, ctx);
  shoal::AddWaitCommand(app, ctx);
  shoal::AddStackCommand(app, ctx);
  shoal::AddQueuesCommand(app, ctx);
  shoal::AddSaveModelCommand(app, ctx);
  shoal::AddUserCommand(app, ctx);
  app.add_subcommand("server", "Run the Shoal server (see `shoal server --help`).");
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : shoal::kExitBadInput;
  }
  return 0;
}
