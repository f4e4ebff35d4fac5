#include "client/stack_command.h"

#include <cstdio>
#include <memory>

#include "client/job_argument.h"

namespace shoal {

void AddStackCommand(CLI::App& app, ClientContext& ctx) {
  auto* cmd = app.add_subcommand("stack",
                                 "Show where every running task of a job is waiting: native and Python stacks, "
                                 "taken with gdb without stopping the job; each task's log keeps a copy.");
  auto id = std::make_shared<std::string>();
  AddJobArgument(*cmd, *id);
  cmd->add_flag("--json", ctx.json, "print the stacks as JSON");
  cmd->callback([&ctx, id] {
    WithServer(ctx, [&](const HttpJsonClient& server) -> Status {
      ASSIGN_OR_RETURN(Json reply, server.Post("/api/v1/jobs/" + UrlEncode(*id) + "/stack", Json::object(), 70'000));
      if (ctx.json) {
        std::printf("%s\n", reply.dump(2).c_str());
        return Status::Ok();
      }
      for (const Json& task : reply["tasks"]) {
        std::printf("######## %s on %s%s\n%s\n", task.value("task", "?").c_str(), task.value("host", "?").c_str(),
                    task.value("answered", false) ? "" : " (no answer)", task.value("text", "").c_str());
      }
      std::printf("(each task's log keeps these stacks: shoal logs %s --role R --index I)\n", id->c_str());
      return Status::Ok();
    });
  });
}

}  // namespace shoal
