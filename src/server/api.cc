#include "server/api.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <fstream>
#include <memory>
#include <regex>

#include "common/http_server.h"
#include "runtime/framework.h"
#include "server/job_access.h"
#include "server/log_files.h"
#include "server/metrics_page.h"
#include "server/stack_capture.h"
#include "server/task_page.h"
#include "protocol/api_messages.h"
#include "protocol/attempt_messages.h"
#include "spec/spec_document.h"
#include "spec/spec_parser.h"
#include "submission/submission_check.h"

namespace shoal {
namespace {

// cpp-httplib reads a form-encoded body (what curl -d and urllib send unless told
// otherwise) only up to 8 KiB, and answers 413 past that; the API reads JSON whatever the
// Content-Type says, so the fix is the header.
constexpr const char* kFormBodyRefusal =
    "a body sent as a form (Content-Type: application/x-www-form-urlencoded) may hold at most 8 KiB, and the API reads "
    "JSON; send it with Content-Type: application/json";

bool IsFormBody(const httplib::Request& req) {
  return req.get_header_value("Content-Type").starts_with("application/x-www-form-urlencoded");
}

// A whole-number query parameter, clamped to [lo, hi]; `fallback` when absent or empty.
// Anything else (limit=abc, offset=1.5) is refused, naming the parameter.
Result<int64_t> Int64Param(const httplib::Request& req, const char* name, int64_t fallback, int64_t lo, int64_t hi) {
  if (!req.has_param(name) || req.get_param_value(name).empty()) return fallback;
  const std::string text = req.get_param_value(name);
  errno = 0;
  char* end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (*end != '\0' || std::isspace(static_cast<unsigned char>(text.front()))) {
    return InvalidArgument("query parameter " + std::string(name) + "='" + text.substr(0, 40) +
                           "' is not a whole number; fix: e.g. " + name + "=" + std::to_string(fallback));
  }
  if (errno == ERANGE) value = text.front() == '-' ? lo : hi;
  return std::clamp<int64_t>(value, lo, hi);
}

Result<int> IntParam(const httplib::Request& req, const char* name, int fallback, int lo, int hi) {
  ASSIGN_OR_RETURN(int64_t value, Int64Param(req, name, fallback, lo, hi));
  return static_cast<int>(value);
}

std::optional<std::string> OptionalParam(const httplib::Request& req, const char* name) {
  if (!req.has_param(name) || req.get_param_value(name).empty()) return std::nullopt;
  return req.get_param_value(name);
}

// POST /api/v1/jobs: {"spec": YAML or JSON text, or an object in the same schema,
//  "overrides": ["path=value"], "source_name": "job.yaml", "base_dir": "/abs", "user": "name"}
Result<Json> SubmitJob(JobManager& jobs, const std::optional<Caller>& caller, const httplib::Request& req) {
  ASSIGN_OR_RETURN(Json body, ParseBody(req));
  ASSIGN_OR_RETURN(protocol::SubmitRequest submit, protocol::Decode<protocol::SubmitRequest>(body));
  ParseOptions options;
  options.source_name = submit.source_name;
  options.base_dir = submit.base_dir;
  options.default_name = submit.default_name;
  options.overrides = submit.overrides;
  options.known_frameworks = KnownFrameworks();
  ASSIGN_OR_RETURN(ParsedSpec parsed, ParseJobSpec(submit.spec, options));
  // The CLI's check, with the same file and line numbers: the API accepts no spec that
  // `shoal submit` would refuse.
  RETURN_IF_ERROR(CheckSubmission(parsed, jobs.Capacity(), jobs.home()));
  parsed.spec.user = SubmitterName(caller, submit.user);
  ASSIGN_OR_RETURN(std::string id, jobs.Submit(std::move(parsed.spec)));
  return Json{{"id", id}};
}

// The job named by the route's first match, after checking that the caller may act on it.
Result<Json> JobFor(JobManager& jobs, const std::optional<Caller>& caller, JobAction action, const httplib::Request& req) {
  std::string id = std::string(req.matches[1]);
  ASSIGN_OR_RETURN(Json detail, jobs.Get(id, 0, 0));
  RETURN_IF_ERROR(CheckJobAccess(caller, action, id, detail.value("user", "")));
  return detail;
}

// The server's own calls (shutdown) need the server's token or an administrator's.
Status RequireAdmin(const std::optional<Caller>& caller, const std::string& what) {
  if (caller && caller->admin) return Status::Ok();
  return PermissionDenied("only the server's token or an administrator may " + what);
}

// An attempt's /internal/ routes: its AM (with that attempt's token) or an administrator.
Result<std::pair<std::string, int>> RequireAttempt(const std::optional<Caller>& caller, const httplib::Request& req,
                                                   const std::string& what) {
  std::string id = std::string(req.matches[1]);
  std::string number = std::string(req.matches[2]);
  if (number.size() > 6) return NotFound("job '" + id + "' has no attempt " + number);
  int attempt = std::stoi(number);
  if (caller && (caller->admin || caller->attempt == std::make_pair(id, attempt))) return std::make_pair(id, attempt);
  return PermissionDenied("only the application master of " + id + " attempt " + number +
                          " (with that attempt's token) or an administrator may " + what);
}

// The log file named by ?role=&index=&attempt= (role: the spec's first role when absent).
Result<std::string> TaskLogPath(JobManager& jobs, const std::optional<Caller>& caller, const httplib::Request& req) {
  ASSIGN_OR_RETURN(Json detail, JobFor(jobs, caller, JobAction::kRead, req));
  std::string role = req.has_param("role") ? req.get_param_value("role") : "";
  ASSIGN_OR_RETURN(int index, IntParam(req, "index", 0, -1, 1 << 20));
  ASSIGN_OR_RETURN(int attempt, IntParam(req, "attempt", 0, 0, 1000));
  if (role.empty()) role = JobSpecFromDocument(detail["spec"]).roles.front().name;
  return jobs.LogPath(std::string(req.matches[1]), attempt, role, index);
}

Result<Json> ReadLog(JobManager& jobs, const std::optional<Caller>& caller, const httplib::Request& req) {
  ASSIGN_OR_RETURN(std::string path, TaskLogPath(jobs, caller, req));
  ASSIGN_OR_RETURN(int64_t offset, Int64Param(req, "offset", 0, 0, INT64_MAX));
  ASSIGN_OR_RETURN(int limit, IntParam(req, "limit", 1 << 20, 1, 8 << 20));
  return ReadLogChunk(path, offset, limit);
}

// GET .../logs/raw: the whole log as text/plain (?download=1: as an attachment).
void SendRawLog(JobManager& jobs, const std::optional<Caller>& caller, const httplib::Request& req,
                httplib::Response& res) {
  auto path = TaskLogPath(jobs, caller, req);
  if (!path.ok()) return ReplyError(res, path.status());
  auto file = std::make_shared<std::ifstream>(*path, std::ios::binary);
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Content-Security-Policy", "default-src 'none'; sandbox");
  if (req.get_param_value("download") == "1") {
    std::string name = std::string(req.matches[1]) + "-" + path->substr(path->rfind('/') + 1);
    res.set_header("Content-Disposition", "attachment; filename=\"" + name + "\"");
  }
  if (!*file) return res.set_content("", "text/plain; charset=utf-8");
  res.set_chunked_content_provider("text/plain; charset=utf-8", [file](size_t, httplib::DataSink& sink) {
    char buffer[64 * 1024];
    file->read(buffer, sizeof buffer);
    if (file->gcount() > 0) sink.write(buffer, static_cast<size_t>(file->gcount()));
    if (!*file) sink.done();
    return true;
  });
}

}  // namespace

void InstallApi(httplib::Server& http, ApiContext ctx) {
  JobManager& jobs = ctx.jobs;
  const ServerAuth& auth = ctx.auth;
  auto caller = [&auth](const httplib::Request& req) {
    return auth.Identify(req.get_header_value("Authorization"), req.path);
  };
  // Every route is also recorded, so a known path asked with another method gets 405.
  auto routes = std::make_shared<std::vector<std::pair<std::regex, std::string>>>();
  auto get = [&http, routes](const std::string& pattern, httplib::Server::Handler handler) {
    routes->emplace_back(std::regex(pattern), "GET");
    http.Get(pattern, std::move(handler));
  };
  auto post = [&http, routes](const std::string& pattern, httplib::Server::Handler handler) {
    routes->emplace_back(std::regex(pattern), "POST");
    http.Post(pattern, std::move(handler));
  };
  get("/api/v1/health", RouteJson([ctx](const httplib::Request&) -> Result<Json> {
    return Json{{"ok", true}, {"backend", ctx.backend_name}, {"pid", getpid()}};
  }));
  get("/api/v1/whoami", RouteJson([caller](const httplib::Request& req) -> Result<Json> {
    auto who = caller(req);
    if (!who) return Json{{"user", nullptr}, {"admin", false}};
    return Json{{"user", who->user}, {"admin", who->admin}};
  }));
  get("/api/v1/cluster", RouteJson([&jobs](const httplib::Request&) -> Result<Json> { return jobs.ClusterInfo(); }));
  get("/api/v1/queues", RouteJson([&jobs](const httplib::Request&) -> Result<Json> { return jobs.Queues(); }));
  post("/api/v1/jobs", RouteJson([&jobs, caller](const httplib::Request& req) { return SubmitJob(jobs, caller(req), req); }));
  get("/api/v1/jobs", RouteJson([&jobs](const httplib::Request& req) -> Result<Json> {
    JobFilter filter;
    filter.state = OptionalParam(req, "state");
    // job states are named in capitals; running is RUNNING
    if (filter.state) std::transform(filter.state->begin(), filter.state->end(), filter.state->begin(), ::toupper);
    filter.user = OptionalParam(req, "user");
    filter.name = OptionalParam(req, "name");
    if (filter.state && !Parse<JobState>(*filter.state)) {
      return InvalidArgument("state '" + *filter.state + "' is not a job state; use QUEUED, RUNNING, SUCCEEDED, FAILED or KILLED");
    }
    ASSIGN_OR_RETURN(filter.limit, IntParam(req, "limit", 50, 1, 1000));
    ASSIGN_OR_RETURN(filter.offset, IntParam(req, "offset", 0, 0, 1 << 30));
    return jobs.List(filter);
  }));
  get(R"(/api/v1/jobs/([^/]+))", RouteJson([&jobs, caller](const httplib::Request& req) -> Result<Json> {
    std::string id = std::string(req.matches[1]);
    ASSIGN_OR_RETURN(int wait_version, IntParam(req, "wait_version", 0, 0, 1 << 30));
    ASSIGN_OR_RETURN(int wait_ms, IntParam(req, "wait_ms", 0, 0, 60'000));
    std::optional<TaskPageQuery> page;  // one page of the latest attempt's tasks (server/task_page.h)
    if (req.has_param("task_limit")) {
      page.emplace();
      ASSIGN_OR_RETURN(page->limit, IntParam(req, "task_limit", 100, 1, 1000));
      ASSIGN_OR_RETURN(page->offset, Int64Param(req, "task_offset", 0, 0, INT64_MAX));
      page->role = req.get_param_value("task_role");
      ASSIGN_OR_RETURN(page->states, ParseTaskStates(req.get_param_value("task_state")));
    }
    ASSIGN_OR_RETURN(Json detail, jobs.Get(id, wait_version, wait_ms, page ? &*page : nullptr));
    RETURN_IF_ERROR(CheckJobAccess(caller(req), JobAction::kRead, id, detail.value("user", "")));
    if (detail.contains("spec")) detail["spec"] = MaskSecretValues(std::move(detail["spec"]));
    return detail;
  }));
  post(R"(/api/v1/jobs/([^/]+)/kill)", RouteJson([&jobs, caller](const httplib::Request& req) -> Result<Json> {
    RETURN_IF_ERROR(JobFor(jobs, caller(req), JobAction::kChange, req).status());
    return jobs.Kill(std::string(req.matches[1]));
  }));
  get(R"(/api/v1/jobs/([^/]+)/logs)", RouteJson([&jobs, caller](const httplib::Request& req) { return ReadLog(jobs, caller(req), req); }));
  get(R"(/api/v1/jobs/([^/]+)/logs/raw)", [&jobs, caller](const httplib::Request& req, httplib::Response& res) {
    SendRawLog(jobs, caller(req), req, res);
  });
  get(R"(/api/v1/jobs/([^/]+)/logs/search)", RouteJson([&jobs, caller](const httplib::Request& req) -> Result<Json> {
    ASSIGN_OR_RETURN(std::string path, TaskLogPath(jobs, caller(req), req));
    ASSIGN_OR_RETURN(int max_matches, IntParam(req, "max", 500, 1, 5000));
    return SearchLog(path, req.get_param_value("q"), max_matches);
  }));
  get(R"(/api/v1/jobs/([^/]+)/series)", RouteJson([&jobs, caller](const httplib::Request& req) -> Result<Json> {
    RETURN_IF_ERROR(JobFor(jobs, caller(req), JobAction::kRead, req).status());
    ASSIGN_OR_RETURN(int attempt, IntParam(req, "attempt", 0, 0, 1000));
    ASSIGN_OR_RETURN(int64_t after_sample, Int64Param(req, "after_sample", 0, 0, INT64_MAX));
    ASSIGN_OR_RETURN(int64_t after_point, Int64Param(req, "after_point", 0, 0, INT64_MAX));
    return jobs.Series(std::string(req.matches[1]), attempt, SeriesCursor{after_sample, after_point});
  }));
  post(R"(/api/v1/jobs/([^/]+)/stack)", RouteJson([&jobs, &auth, caller](const httplib::Request& req) -> Result<Json> {
    RETURN_IF_ERROR(JobFor(jobs, caller(req), JobAction::kChange, req).status());
    return CaptureStacks(jobs, std::string(req.matches[1]), auth);
  }));
  post(R"(/api/v1/jobs/([^/]+)/save-model)", RouteJson([&jobs, caller](const httplib::Request& req) -> Result<Json> {
    RETURN_IF_ERROR(JobFor(jobs, caller(req), JobAction::kChange, req).status());
    return jobs.SaveModel(std::string(req.matches[1]));
  }));
  get("/metrics", [ctx](const httplib::Request&, httplib::Response& res) {
    auto metrics = ctx.jobs.Metrics();
    if (!metrics.ok()) return ReplyError(res, metrics.status());
    res.set_content(RenderMetrics(*metrics, ctx.requests), "text/plain; version=0.0.4; charset=utf-8");
  });
  post("/api/v1/shutdown", RouteJson([ctx, caller](const httplib::Request& req) -> Result<Json> {
    if (req.remote_addr != "127.0.0.1" && req.remote_addr != "::1") {
      return FailedPrecondition("the server can only be stopped from its own machine");
    }
    RETURN_IF_ERROR(RequireAdmin(caller(req), "stop the server"));
    ctx.shutdown();
    return Json{{"stopping", true}};
  }));

  // The AMs' side.
  get(R"(/internal/v1/jobs/([^/]+)/attempts/([0-9]+))", RouteJson([&jobs, caller](const httplib::Request& req) -> Result<Json> {
    ASSIGN_OR_RETURN(auto attempt, RequireAttempt(caller(req), req, "read an attempt's full spec"));
    return jobs.AttemptForAm(attempt.first, attempt.second);
  }));
  post(R"(/internal/v1/jobs/([^/]+)/attempts/([0-9]+)/report)", RouteJson([&jobs, caller](const httplib::Request& req) -> Result<Json> {
    ASSIGN_OR_RETURN(auto attempt, RequireAttempt(caller(req), req, "report for an attempt"));
    ASSIGN_OR_RETURN(Json body, ParseBody(req));
    ASSIGN_OR_RETURN(protocol::AttemptReport report, protocol::Decode<protocol::AttemptReport>(body));
    return jobs.Report(attempt.first, attempt.second, std::move(report));
  }));
  http.set_error_handler([routes](const httplib::Request& req, httplib::Response& res) {
    if (res.status == 404 && res.body.empty()) {
      std::string allowed;
      for (const auto& [pattern, method] : *routes) {
        if (method != req.method && std::regex_match(req.path, pattern) && allowed.find(method) == std::string::npos) {
          allowed += (allowed.empty() ? "" : ", ") + method;
        }
      }
      if (!allowed.empty()) {
        res.status = 405;
        res.set_header("Allow", allowed);
        ReplyError(res, InvalidArgument(req.path + " takes " + allowed + ", not " + req.method + "; see docs/api.md"));
        res.status = 405;
        return;
      }
    }
    if (res.body.empty()) {
      ReplyError(res, res.status == 404   ? NotFound("no route " + req.method + " " + req.path + "; see docs/api.md")
                      : res.status == 413 ? ResourceExhausted(IsFormBody(req) ? kFormBodyRefusal : "the request body is larger than the server accepts (64 MiB)")
                                          : InvalidArgument("the server could not read the request (HTTP " + std::to_string(res.status) + "); a POST needs a JSON body, e.g. {}"));
    }
  });
}

}  // namespace shoal
