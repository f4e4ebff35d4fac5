#include "client/submit_command.h"

#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>

#include "backend/local/local_backend.h"
#include "client/job_reads.h"
#include "client/job_view.h"
#include "client/server_connection.h"
#include "common/files.h"
#include "common/paths.h"
#include "protocol/api_messages.h"
#include "submission/submission_check.h"

namespace shoal {
namespace {

std::atomic<int> g_interrupts{0};

ClusterCapacity CapacityFromJson(const Json& cluster) {
  auto read = [](const Json& r) {
    return Resources{r.value("cpus", 0.0), r.value("memory_bytes", int64_t{0}), r.value("gpus", 0)};
  };
  return {read(cluster["total"]), read(cluster["largest_node"])};
}

// Validates everything that can be checked here, then submits. Starts the embedded
// server only once the spec is known to be good.
Result<std::pair<HttpJsonClient, std::string>> ValidateAndSubmit(const ClientContext& ctx, const SpecFlags& flags) {
  ASSIGN_OR_RETURN(ParsedSpec parsed, LoadSpec(flags));
  auto running = ctx.Connect();
  ClusterCapacity capacity = DetectLocalCapacity();
  const std::string& wanted = parsed.spec.cluster;
  if (running.ok()) {
    ASSIGN_OR_RETURN(Json cluster, running->Get("/api/v1/cluster"));
    capacity = CapacityFromJson(cluster);
    std::string backend = cluster.value("backend", "local");
    if (!wanted.empty() && wanted != backend) {
      return InvalidArgument("cluster: the server for " + ctx.home + " runs jobs on " + backend + ", not on " + wanted +
                             "; fix: stop it (`shoal server --stop`) and start `shoal server --cluster " + wanted +
                             "`, or use another --home");
    }
  } else if (!wanted.empty() && wanted != "local") {
    // The nodes must reach the server, so it cannot be the embedded loopback one.
    return InvalidArgument("cluster: " + wanted + " jobs need a running `shoal server --cluster " + wanted +
                           " --host ADDRESS` (an address the nodes reach); none runs for " + ctx.home +
                           " (docs/slurm.md)");
  }
  RETURN_IF_ERROR(CheckSubmission(parsed, capacity, ctx.home));

  ASSIGN_OR_RETURN(HttpJsonClient server, running.ok() ? running : ctx.ConnectOrStart());
  ASSIGN_OR_RETURN(std::vector<std::string> overrides, flags.Overrides());
  std::string text;
  if (!flags.file.empty()) {
    ASSIGN_OR_RETURN(text, ReadSpecFile(flags.file));
  }
  protocol::SubmitRequest submit{text,
                                 overrides,
                                 parsed.sources.source_name(),
                                 flags.file.empty() ? AbsolutePath(".") : DirName(AbsolutePath(flags.file)),
                                 parsed.spec.name,
                                 CurrentUserName()};
  Json body = protocol::Encode(submit);
  ASSIGN_OR_RETURN(Json reply, server.Post("/api/v1/jobs", body));
  return std::make_pair(server, reply["id"].get<std::string>());
}

}  // namespace

int FollowJob(const HttpJsonClient& server, const std::string& id, bool draw) {
  struct sigaction action {};
  action.sa_handler = [](int) { g_interrupts++; };
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  LiveView view(stderr, draw && isatty(2));
  int64_t version = 0;
  bool kill_sent = false;
  while (true) {
    if (g_interrupts > 0 && !kill_sent) {
      std::fprintf(stderr, "\nshoal: killing %s (Ctrl-C)\n", id.c_str());
      (void)server.Post("/api/v1/jobs/" + id + "/kill", Json::object());
      kill_sent = true;
    }
    auto detail = FetchJob(server, id, version, 500);
    if (!detail.ok()) {
      if (g_interrupts > 1) return kExitFailed;
      StatusCode code = detail.status().code();
      if (code == StatusCode::kNotFound || code == StatusCode::kFailedPrecondition) return ReportError(detail.status());
      usleep(200'000);  // the server may be restarting: keep following
      continue;
    }
    version = detail->version;
    if (draw) view.Update(*detail);
    if (IsFinal(detail->summary.state)) {
      view.Finish();
      std::fputs(RenderSummary(*detail).c_str(), stderr);
      return detail->summary.state == JobState::kSucceeded ? kExitOk : kExitFailed;
    }
  }
}

void AddRunCommand(CLI::App& app, ClientContext& ctx) {
  auto* cmd = app.add_subcommand("run", "Run a job and follow it to the end (starts the local server if none runs).\n"
                                        "Exit code: 0 the job succeeded, 1 it failed or was killed, 2 bad spec.");
  auto flags = std::make_shared<SpecFlags>();
  flags->AddTo(*cmd);
  cmd->callback([&ctx, flags] {
    auto submitted = ValidateAndSubmit(ctx, *flags);
    if (!submitted.ok()) throw CLI::RuntimeError(ReportError(submitted.status()));
    auto& [server, id] = *submitted;
    std::fprintf(stderr, "submitted %s\n", id.c_str());
    throw CLI::RuntimeError(FollowJob(server, id, true));
  });
}

void AddSubmitCommand(CLI::App& app, ClientContext& ctx) {
  auto* cmd = app.add_subcommand("submit", "Submit a job and print its id (starts the local server if none runs).");
  auto flags = std::make_shared<SpecFlags>();
  flags->AddTo(*cmd);
  cmd->add_flag("--json", ctx.json, "print {\"id\": ...} as JSON");
  cmd->callback([&ctx, flags] {
    auto submitted = ValidateAndSubmit(ctx, *flags);
    if (!submitted.ok()) throw CLI::RuntimeError(ReportError(submitted.status()));
    const std::string& id = submitted->second;
    if (ctx.json) std::printf("%s\n", Json{{"id", id}}.dump().c_str());
    else std::printf("%s\n", id.c_str());
  });
}

}  // namespace shoal
