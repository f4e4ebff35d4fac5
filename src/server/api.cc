#include "server/api.h"

#include <unistd.h>

#include <fstream>

#include "common/http_server.h"
#include "runtime/framework.h"
#include "spec/spec_parser.h"

namespace shoal {
namespace {

int IntParam(const httplib::Request& req, const char* name, int fallback, int lo, int hi) {
  if (!req.has_param(name)) return fallback;
  std::string text = req.get_param_value(name);
  char* end = nullptr;
  long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0') return fallback;
  return static_cast<int>(std::clamp<long>(value, lo, hi));
}

std::optional<std::string> OptionalParam(const httplib::Request& req, const char* name) {
  if (!req.has_param(name) || req.get_param_value(name).empty()) return std::nullopt;
  return req.get_param_value(name);
}

// POST /api/v1/jobs: {"spec": YAML or JSON text, or an object in the same schema,
//  "overrides": ["path=value"], "source_name": "job.yaml", "base_dir": "/abs", "user": "name"}
Result<Json> SubmitJob(JobManager& jobs, const httplib::Request& req) {
  ASSIGN_OR_RETURN(Json body, ParseBody(req));
  if (!body.contains("spec")) return InvalidArgument("the body needs \"spec\": the job spec as YAML text or an object");
  ParseOptions options;
  options.source_name = body.value("source_name", "job spec");
  options.base_dir = body.value("base_dir", "/");
  options.default_name = body.value("default_name", "job");
  options.overrides = body.value("overrides", std::vector<std::string>{});
  options.known_frameworks = KnownFrameworks();
  std::string text = body["spec"].is_string() ? body["spec"].get<std::string>() : body["spec"].dump();
  ASSIGN_OR_RETURN(ParsedSpec parsed, ParseJobSpec(text, options));
  parsed.spec.user = body.value("user", "unknown");
  ASSIGN_OR_RETURN(std::string id, jobs.Submit(std::move(parsed.spec)));
  return Json{{"id", id}};
}

Result<Json> ReadLog(JobManager& jobs, const httplib::Request& req) {
  std::string id = std::string(req.matches[1]);
  std::string role = req.has_param("role") ? req.get_param_value("role") : "";
  int index = IntParam(req, "index", 0, -1, 1 << 20);
  int attempt = IntParam(req, "attempt", 0, 0, 1000);
  int64_t offset = req.has_param("offset") ? std::max(0LL, std::atoll(req.get_param_value("offset").c_str())) : 0;
  int limit = IntParam(req, "limit", 1 << 20, 1, 8 << 20);
  if (role.empty()) {
    ASSIGN_OR_RETURN(Json detail, jobs.Get(id, 0, 0));
    role = JobSpecFromJson(detail["spec"]).roles.front().name;
  }
  ASSIGN_OR_RETURN(std::string path, jobs.LogPath(id, attempt, role, index));
  std::ifstream file(path, std::ios::binary);
  if (!file) return Json{{"text", ""}, {"offset", offset}, {"next_offset", offset}, {"path", path}};
  file.seekg(0, std::ios::end);
  int64_t size = file.tellg();
  offset = std::min(offset, size);
  file.seekg(offset);
  std::string text(static_cast<size_t>(std::min<int64_t>(limit, size - offset)), '\0');
  file.read(text.data(), static_cast<std::streamsize>(text.size()));
  return Json{{"text", text}, {"offset", offset}, {"next_offset", offset + static_cast<int64_t>(text.size())},
              {"size", size}, {"path", path}};
}

}  // namespace

void InstallApi(httplib::Server& http, ApiContext ctx) {
  JobManager& jobs = ctx.jobs;
  http.Get("/api/v1/health", RouteJson([ctx](const httplib::Request&) -> Result<Json> {
    return Json{{"ok", true}, {"backend", ctx.backend_name}, {"pid", getpid()}};
  }));
  http.Get("/api/v1/cluster", RouteJson([&jobs](const httplib::Request&) -> Result<Json> { return jobs.ClusterInfo(); }));
  http.Post("/api/v1/jobs", RouteJson([&jobs](const httplib::Request& req) { return SubmitJob(jobs, req); }));
  http.Get("/api/v1/jobs", RouteJson([&jobs](const httplib::Request& req) -> Result<Json> {
    JobFilter filter;
    filter.state = OptionalParam(req, "state");
    filter.user = OptionalParam(req, "user");
    filter.name = OptionalParam(req, "name");
    if (filter.state && !ParseJobState(*filter.state)) {
      return InvalidArgument("state '" + *filter.state + "' is not a job state; use QUEUED, RUNNING, SUCCEEDED, FAILED or KILLED");
    }
    filter.limit = IntParam(req, "limit", 50, 1, 1000);
    filter.offset = IntParam(req, "offset", 0, 0, 1 << 30);
    return jobs.List(filter);
  }));
  http.Get(R"(/api/v1/jobs/([^/]+))", RouteJson([&jobs](const httplib::Request& req) {
    return jobs.Get(std::string(req.matches[1]), IntParam(req, "wait_version", 0, 0, 1 << 30),
                    IntParam(req, "wait_ms", 0, 0, 60'000));
  }));
  http.Post(R"(/api/v1/jobs/([^/]+)/kill)", RouteJson([&jobs](const httplib::Request& req) {
    return jobs.Kill(std::string(req.matches[1]));
  }));
  http.Get(R"(/api/v1/jobs/([^/]+)/logs)", RouteJson([&jobs](const httplib::Request& req) { return ReadLog(jobs, req); }));
  http.Post("/api/v1/shutdown", RouteJson([ctx](const httplib::Request& req) -> Result<Json> {
    if (req.remote_addr != "127.0.0.1" && req.remote_addr != "::1") {
      return FailedPrecondition("the server can only be stopped from its own machine");
    }
    ctx.shutdown();
    return Json{{"stopping", true}};
  }));

  // The AMs' side.
  http.Get(R"(/internal/v1/jobs/([^/]+)/attempts/([0-9]+))", RouteJson([&jobs](const httplib::Request& req) {
    return jobs.AttemptForAm(std::string(req.matches[1]), std::atoi(std::string(req.matches[2]).c_str()));
  }));
  http.Post(R"(/internal/v1/jobs/([^/]+)/attempts/([0-9]+)/report)", RouteJson([&jobs](const httplib::Request& req) -> Result<Json> {
    ASSIGN_OR_RETURN(Json body, ParseBody(req));
    RETURN_IF_ERROR(jobs.Report(std::string(req.matches[1]), std::atoi(std::string(req.matches[2]).c_str()), body));
    return Json::object();
  }));
  http.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (res.body.empty()) {
      ReplyError(res, res.status == 404 ? NotFound("no route " + req.method + " " + req.path + "; see docs/api.md")
                                        : Status(StatusCode::kInvalidArgument, "bad request"));
    }
  });
}

}  // namespace shoal
