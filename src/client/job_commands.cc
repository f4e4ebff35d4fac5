#include "client/job_commands.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

#include "client/job_argument.h"
#include "client/job_reads.h"
#include "client/job_view.h"
#include "client/submit_command.h"

namespace shoal {

void AddStatusCommand(CLI::App& app, ClientContext& ctx) {
  auto* cmd = app.add_subcommand("status", "Show a job: state, tasks, attempts, where its logs are.");
  auto id = std::make_shared<std::string>();
  auto attempt = std::make_shared<int>(0);
  auto all_tasks = std::make_shared<bool>(false);
  AddJobArgument(*cmd, *id);
  cmd->add_option("--attempt", *attempt, "show the tasks of this attempt (default: the latest)")->check(CLI::PositiveNumber);
  cmd->add_flag("--tasks", *all_tasks,
                "list every task, one a line (a job of more than " + std::to_string(kListedTasks) +
                    " tasks is otherwise summarised by role and state)");
  cmd->add_flag("--json", ctx.json, "print the API's JSON");
  cmd->callback([&ctx, id, attempt, all_tasks] {
    WithServer(ctx, [&](const HttpJsonClient& server) -> Status {
      if (ctx.json) {
        ASSIGN_OR_RETURN(Json detail, server.Get("/api/v1/jobs/" + UrlEncode(*id)));
        std::printf("%s\n", detail.dump(2).c_str());
        return Status::Ok();
      }
      ASSIGN_OR_RETURN(protocol::JobDetail detail, FetchJob(server, *id));
      if (*attempt > static_cast<int>(detail.attempts.size())) {
        return InvalidArgument("--attempt " + std::to_string(*attempt) + ": " + detail.summary.id + " has " +
                               std::to_string(detail.attempts.size()) + " attempt(s); fix: pick one of them");
      }
      std::fputs(RenderStatus(detail, *attempt, *all_tasks).c_str(), stdout);
      return Status::Ok();
    });
  });
}

void AddListCommand(CLI::App& app, ClientContext& ctx) {
  auto* cmd = app.add_subcommand("list", "List jobs, newest first.");
  auto state = std::make_shared<std::string>();
  auto user = std::make_shared<std::string>();
  auto name = std::make_shared<std::string>();
  auto limit = std::make_shared<int>(50);
  auto offset = std::make_shared<int>(0);
  cmd->add_option("--state", *state, "only jobs in this state (QUEUED, RUNNING, SUCCEEDED, FAILED, KILLED)");
  cmd->add_option("--user", *user, "only this user's jobs");
  cmd->add_option("--name", *name, "only jobs whose name contains this");
  cmd->add_option("--limit", *limit, "at most this many")->check(CLI::Range(1, 1000));
  cmd->add_option("--offset", *offset, "skip this many")->check(CLI::NonNegativeNumber);
  cmd->add_flag("--json", ctx.json, "print the API's JSON");
  cmd->callback([=, &ctx] {
    WithServer(ctx, [&](const HttpJsonClient& server) -> Status {
      std::string query = "limit=" + std::to_string(*limit) + "&offset=" + std::to_string(*offset);
      if (!state->empty()) query += "&state=" + UrlEncode(*state);
      if (!user->empty()) query += "&user=" + UrlEncode(*user);
      if (!name->empty()) query += "&name=" + UrlEncode(*name);
      if (ctx.json) {
        ASSIGN_OR_RETURN(Json list, server.Get("/api/v1/jobs?" + query));
        std::printf("%s\n", list.dump(2).c_str());
        return Status::Ok();
      }
      ASSIGN_OR_RETURN(protocol::JobList list, FetchJobs(server, query));
      std::fputs(RenderList(list).c_str(), stdout);
      return Status::Ok();
    });
  });
}

void AddSaveModelCommand(CLI::App& app, ClientContext& ctx) {
  auto* cmd = app.add_subcommand("save-model", "Save the model while the job runs: every task uploads its outputs to "
                                               "<output uri>/saved-<UTC time>/; waits until they have.");
  auto id = std::make_shared<std::string>();
  auto no_wait = std::make_shared<bool>(false);
  AddJobArgument(*cmd, *id);
  cmd->add_flag("--no-wait", *no_wait, "return once the request is recorded");
  cmd->callback([&ctx, id, no_wait] {
    WithServer(ctx, [&](const HttpJsonClient& server) -> Status {
      std::string job = UrlEncode(*id);
      Result<Json> reply = server.Post("/api/v1/jobs/" + job + "/save-model", Json::object());
      // Refused (409: the job has no outputs, or does not run): nothing was started.
      if (!reply.ok() && reply.status().code() == StatusCode::kFailedPrecondition) {
        return InvalidArgument(reply.status().message());
      }
      if (!reply.ok()) return reply.status();
      ASSIGN_OR_RETURN(protocol::SavedModelView entry, protocol::DecodeSavedModelView(*reply, "save"));
      const std::string& name = entry.name;
      std::printf("save %s requested; it commits to:\n", name.c_str());
      for (const std::string& target : entry.targets) std::printf("  %s\n", target.c_str());
      std::fflush(stdout);
      if (*no_wait) return Status::Ok();
      for (int i = 0; i < 600; ++i) {
        ASSIGN_OR_RETURN(protocol::JobDetail detail, FetchJob(server, *id));
        for (const protocol::SavedModelView& saved : detail.saved_models) {
          if (saved.name != name) continue;
          if (saved.state == SaveState::kSaved) {
            std::printf("saved %s: %s\n", name.c_str(), saved.uri.c_str());
            return Status::Ok();
          }
          if (saved.state == SaveState::kFailed) return Unavailable("save " + name + " failed: " + saved.message);
        }
        if (IsFinal(detail.summary.state)) return FailedPrecondition("the job ended before save " + name + " finished");
        usleep(500'000);
      }
      return Timeout("save " + name + " did not finish within 5 minutes; see `shoal status " + *id + "`");
    });
  });
}

namespace {

// Waits until `job`, just killed, has ended (at most 2 minutes); returns its final detail,
// and in `raw` the JSON it came as.
Result<protocol::JobDetail> WaitUntilEnded(const HttpJsonClient& server, const std::string& job, Json& raw) {
  int64_t version = 0;
  for (int i = 0; i < 120; ++i) {
    ASSIGN_OR_RETURN(protocol::JobDetail detail, FetchJob(server, job, version, 1000, &raw));
    version = detail.version;
    if (IsFinal(detail.summary.state)) return detail;
  }
  return Timeout("job " + job + " did not end within 2 minutes of the kill; see `shoal status " + job + "`");
}

}  // namespace

void AddKillCommand(CLI::App& app, ClientContext& ctx) {
  auto* cmd = app.add_subcommand(
      "kill", "Kill jobs: every process each started ends. Waits until they have; kills none when one is unknown.");
  auto ids = std::make_shared<std::vector<std::string>>();
  AddJobArguments(*cmd, *ids);
  cmd->add_flag("--json", ctx.json, "print each job's final JSON (a list when there are several)");
  cmd->callback([&ctx, ids] {
    WithServer(ctx, [&](const HttpJsonClient& server) -> Status {
      // Every id must name a job before any is killed: a mistyped one kills nothing.
      for (const std::string& id : *ids) RETURN_IF_ERROR(FetchJob(server, id).status());
      std::vector<std::string> jobs;
      for (const std::string& id : *ids) {
        if (std::ranges::find(jobs, id) != jobs.end()) continue;  // named twice
        ASSIGN_OR_RETURN(Json reply, server.Post("/api/v1/jobs/" + UrlEncode(id) + "/kill", Json::object()));
        ASSIGN_OR_RETURN(protocol::JobSummary summary, protocol::Decode<protocol::JobSummary>(reply));
        jobs.push_back(summary.id);
      }
      Json ended = Json::array();
      for (const std::string& job : jobs) {
        Json raw;
        ASSIGN_OR_RETURN(protocol::JobDetail detail, WaitUntilEnded(server, job, raw));
        if (ctx.json) ended.push_back(std::move(raw));
        else std::printf("%s %s\n", job.c_str(), Name(detail.summary.state));
      }
      if (ctx.json) std::printf("%s\n", (ended.size() == 1 ? ended[0] : ended).dump(2).c_str());
      return Status::Ok();
    });
  });
}

void AddWaitCommand(CLI::App& app, ClientContext& ctx) {
  auto* cmd = app.add_subcommand("wait", "Wait until a job ends. Exit code 0 when it succeeded, 1 otherwise.");
  auto id = std::make_shared<std::string>();
  auto quiet = std::make_shared<bool>(false);
  AddJobArgument(*cmd, *id);
  cmd->add_flag("--quiet,-q", *quiet, "print nothing");
  cmd->callback([&ctx, id, quiet] {
    auto server = ctx.Connect();
    if (!server.ok()) throw CLI::RuntimeError(ReportError(server.status()));
    if (*quiet) {
      int null = open("/dev/null", O_WRONLY);
      dup2(null, 2);
    }
    throw CLI::RuntimeError(FollowJob(*server, *id, false));
  });
}

namespace {

// Prints a log from `offset` up to its current end; returns whether it printed anything.
Result<bool> PrintLog(const HttpJsonClient& server, const std::string& base, int attempt, int64_t& offset) {
  bool printed = false;
  while (true) {
    ASSIGN_OR_RETURN(Json chunk, server.Get(base + "&attempt=" + std::to_string(attempt) + "&offset=" + std::to_string(offset)));
    std::string text = chunk["text"];
    fwrite(text.data(), 1, text.size(), stdout);
    fflush(stdout);
    offset = chunk["next_offset"];
    if (text.empty()) return printed;
    printed = true;
  }
}

// `logs -f`: follows one attempt's log until the job ends; without --attempt, moves on to
// each retry's log as its attempt starts.
Status FollowLog(const HttpJsonClient& server, const std::string& id, const std::string& base, int chosen_attempt) {
  int64_t version = 0;
  int attempt = chosen_attempt;
  while (true) {  // a queued job has no logs yet: wait for its first attempt
    ASSIGN_OR_RETURN(protocol::JobDetail detail, FetchJob(server, id, version, 1000));
    version = detail.version;
    if (attempt == 0) attempt = detail.summary.attempt;
    if (attempt > 0 || IsFinal(detail.summary.state)) break;
  }
  if (attempt == 0) return Status::Ok();  // ended before it ever started
  int64_t offset = 0;
  while (true) {
    ASSIGN_OR_RETURN(bool printed, PrintLog(server, base, attempt, offset));
    if (printed) continue;
    ASSIGN_OR_RETURN(protocol::JobDetail detail, FetchJob(server, id));
    bool retried = chosen_attempt == 0 && detail.summary.attempt > attempt;
    if (retried || IsFinal(detail.summary.state)) {
      RETURN_IF_ERROR(PrintLog(server, base, attempt, offset).status());  // what it wrote last
      if (!retried) return Status::Ok();
      attempt = detail.summary.attempt;
      offset = 0;
      std::fprintf(stderr, "shoal: %s attempt %d started; following its log\n", id.c_str(), attempt);
      continue;
    }
    usleep(250'000);
  }
}

}  // namespace

void AddLogsCommand(CLI::App& app, ClientContext& ctx) {
  auto* cmd = app.add_subcommand("logs", "Print a task's output (stdout and stderr), or follow it with -f.");
  auto id = std::make_shared<std::string>();
  auto role = std::make_shared<std::string>();
  auto index = std::make_shared<int>(0);
  auto attempt = std::make_shared<int>(0);
  auto follow = std::make_shared<bool>(false);
  AddJobArgument(*cmd, *id);
  cmd->add_option("--role", *role, "the task's role (default: the first role); am: the attempt's application master");
  cmd->add_option("--index", *index, "the task's index in its role (default 0)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--attempt", *attempt, "which attempt (default: the latest; with -f, each retry in turn)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("-f,--follow", *follow, "keep printing new output until the job ends");
  cmd->callback([=, &ctx] {
    WithServer(ctx, [&](const HttpJsonClient& server) -> Status {
      std::string base = "/api/v1/jobs/" + UrlEncode(*id) + "/logs?index=" + std::to_string(*index);
      if (!role->empty()) base += "&role=" + UrlEncode(*role);
      if (*follow) return FollowLog(server, *id, base, *attempt);
      int64_t offset = 0;
      return PrintLog(server, base, *attempt, offset).status();
    });
  });
}

}  // namespace shoal
