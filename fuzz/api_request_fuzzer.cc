// The REST API: one HTTP request per input, built from the input and answered by the
// real routes, hooks and token checks `shoal server` installs (InstallServerHooks,
// InstallApi, InstallWebUi), over a JobManager on the fake backend. No socket is opened:
// the request's bytes go through httplib's own request parser and router
// (Server::process_request, reached from a subclass) over an in-memory Stream, and the
// bytes written back are parsed as an HTTP reply.
//
// The input (text, so seeds can be written by hand; see fuzz/corpus/api_request/):
//   line 1   four control bytes: the route (c0 - 'a', modulo kRoutes), the method
//            ((c1 - '0') % 16: below 8 the route's own, else one of kMethods), the server
//            ((c2 - '0'): bit 0 it listens beyond loopback, bit 1 the peer is not on
//            loopback) and who calls ((c3 - '0') % 8, enum Who: no token, the server's
//            token, users ann and bob, administrator ops, a wrong token, the server's
//            token without "Bearer ", ann's after "bearer ").
//   then     one line per path parameter of the route (the "free path" route takes the
//            whole path), then one line of query (without '?'), then header lines
//            ("Name: value") up to an empty line, then the body: all the rest.
// Bytes that would end the request line (space, controls, '#', and '?' in a path
// parameter) are percent-encoded; everything else, '%' and '/' included, goes as it is.
// A Content-Length is added unless the headers carry their own.
//
// The world, made once and again whenever a request changed one of its jobs: users ann,
// bob and ops (an administrator) in <home>/users.json; job-1 (bob's) SUCCEEDED on its
// second attempt, job-2 (ann's) RUNNING with worker x2 and ps x1, reports, series, a save
// request, log files and a secret variable, job-3 (ann's) QUEUED behind it, job-4 (bob's)
// KILLED.
//
// What must hold for every input:
//  - no crash, no sanitizer report, no exception escaping into httplib (EXCEPTION_WHAT);
//  - the reply is well-formed HTTP with a status in 2xx-4xx: nothing a client sends is
//    a 5xx, and no 5xx is relabelled a 4xx by the error handler ("(HTTP 5..)");
//  - every 4xx carries {"error": {"code", "message"}} with a non-empty message and changes
//    nothing (no seeded job's version moves, no job is added); every JSON 2xx parses;
//  - tokens (server/server_auth.h): a request that needs a token and carries no valid one
//    gets 401, and no other request gets 401; GET /api/v1/whoami names the caller;
//  - jobs belong to their submitters (server/job_access.h): no 2xx on a job's routes for
//    a caller who may not read or change it, and no 403 for one who may; only
//    administrators get a 2xx from /internal/ and /api/v1/shutdown; a user's new job is
//    theirs; a job's detail shows its secret variables masked.
// Two test-only changes to requests: ?wait_ms (a long poll of up to a minute) is cut
// to 1 ms, and POST .../stack is not sent on while an AM address is known, since it would
// connect to that address. SHOAL_FUZZ_VERBOSE=1 prints each request line and the start
// of its reply, to see what a seed reaches.
#include <httplib.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "backend/fake/fake_backend.h"
#include "common/http_server.h"
#include "server/api.h"
#include "server/job_manager.h"
#include "server/server_auth.h"
#include "server/server_hooks.h"
#include "server/test_jobs.h"
#include "server/user_tokens.h"
#include "server/web_ui.h"
#include "spec/spec_parser.h"

namespace shoal {
namespace {

constexpr const char* kSecretValue = "s3cr3t-value-42";

// The routes of src/server/api.cc and web_ui.cc (docs/api.md); {} is a path parameter.
struct Route {
  const char* method;
  const char* path;  // nullptr: the free path route
};
const Route kRoutes[] = {
    {"GET", "/api/v1/health"},                                    // a
    {"GET", "/api/v1/whoami"},                                    // b
    {"GET", "/api/v1/cluster"},                                   // c
    {"POST", "/api/v1/jobs"},                                     // d
    {"GET", "/api/v1/jobs"},                                      // e
    {"GET", "/api/v1/jobs/{}"},                                   // f
    {"POST", "/api/v1/jobs/{}/kill"},                             // g
    {"GET", "/api/v1/jobs/{}/logs"},                              // h
    {"GET", "/api/v1/jobs/{}/logs/raw"},                          // i
    {"GET", "/api/v1/jobs/{}/logs/search"},                       // j
    {"GET", "/api/v1/jobs/{}/series"},                            // k
    {"POST", "/api/v1/jobs/{}/stack"},                            // l
    {"POST", "/api/v1/jobs/{}/save-model"},                       // m
    {"GET", "/metrics"},                                          // n
    {"POST", "/api/v1/shutdown"},                                 // o
    {"GET", "/internal/v1/jobs/{}/attempts/{}"},                  // p
    {"POST", "/internal/v1/jobs/{}/attempts/{}/report"},          // q
    {"GET", "/"},                                                 // r
    {"GET", "/jobs/{}"},                                          // s
    {"GET", "/static/{}"},                                        // t
    {"GET", nullptr},                                             // u
};
const char* const kMethods[] = {"GET", "POST", "HEAD", "PUT", "DELETE", "PATCH", "OPTIONS", "BREW"};

// Who calls: the Authorization header sent (see World::Header).
enum class Who { kNobody, kServer, kAnn, kBob, kOps, kWrongToken, kNoBearer, kLowerCaseBearer };

// One request's bytes in, the reply's bytes out.
class MemoryStream final : public httplib::Stream {
 public:
  MemoryStream(std::string_view request, std::string remote_ip) : in_(request), remote_ip_(std::move(remote_ip)) {}

  bool is_readable() const override { return position_ < in_.size(); }
  bool is_writable() const override { return true; }
  ssize_t read(char* ptr, size_t size) override {
    size_t n = std::min(size, in_.size() - position_);
    std::copy_n(in_.data() + position_, n, ptr);
    position_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    out_.append(ptr, size);
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = remote_ip_;
    port = 40000;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = "127.0.0.1";
    port = 7480;
  }
  socket_t socket() const override { return 0; }  // below FD_SETSIZE; never used as a socket here

  const std::string& written() const { return out_; }

 private:
  std::string_view in_;
  size_t position_ = 0;
  std::string remote_ip_;
  std::string out_;
};

// A Server that answers one request from a Stream: process_request is protected.
class InProcessServer : public httplib::Server {
 public:
  // Streamed replies stop when the listening socket is gone (svr_sock_ invalid); this
  // server never listens, so it names a descriptor that no one closes.
  InProcessServer() { svr_sock_ = STDERR_FILENO; }

  std::string Answer(std::string_view request, const std::string& remote_ip,
                     const std::function<void(httplib::Request&)>& setup) {
    MemoryStream stream(request, remote_ip);
    bool closed = false;
    (void)process_request(stream, /*close_connection=*/true, closed, setup);
    return stream.written();
  }
};

[[noreturn]] void Die(const std::string& why) {
  std::fprintf(stderr, "api_request_fuzzer: setting up: %s\n", why.c_str());
  std::abort();
}

void WriteFile(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// The JobManager, its stores, the users and two servers over it: one on loopback, one
// beyond (both with the same home, so the same tokens).
class World {
 public:
  explicit World(const std::string& dir) : dir_(dir), home_(dir + "/home") {
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(home_);
    jobs_ = std::make_unique<TestJobs>(dir_ + "/history.db", home_);
    if (!jobs_->started) Die("the job manager did not start");
    for (auto [name, admin] : {std::pair{"ann", false}, {"bob", false}, {"ops", true}}) {
      auto token = AddUser(home_, name, admin);
      if (!token.ok()) Die(token.status().ToString());
      user_tokens_[name] = *token;
    }
    for (int beyond = 0; beyond < 2; ++beyond) {
      auto auth = ServerAuth::ForServer(beyond ? "0.0.0.0" : "127.0.0.1", home_, "owner");
      if (!auth.ok()) Die(auth.status().ToString());
      auth_[beyond] = std::make_unique<ServerAuth>(std::move(*auth));
    }
    server_token_ = auth_[0]->token();
    if (auth_[1]->token() != server_token_) Die("two tokens for one home");
    Populate();
    for (int beyond = 0; beyond < 2; ++beyond) {
      servers_[beyond] = std::make_unique<InProcessServer>();
      InstallServerHooks(*servers_[beyond], *auth_[beyond], requests_, TokenPath(home_));
      InstallApi(*servers_[beyond], ApiContext{*jobs_->manager, *auth_[beyond], requests_, "fake", [] {}});  // shutdown: none
      InstallWebUi(*servers_[beyond], EmbeddedWebAssets());
    }
    versions_ = Versions();
  }
  ~World() {
    for (auto& server : servers_) server.reset();
    jobs_.reset();
    std::filesystem::remove_all(dir_);
  }

  InProcessServer& server(bool beyond_loopback) { return *servers_[beyond_loopback]; }
  JobManager& jobs() { return *jobs_->manager; }

  // The Authorization header `who` sends ("" for none).
  std::string Header(Who who) const {
    switch (who) {
      case Who::kNobody: return "";
      case Who::kServer: return "Bearer " + server_token_;
      case Who::kAnn: return "Bearer " + user_tokens_.at("ann");
      case Who::kBob: return "Bearer " + user_tokens_.at("bob");
      case Who::kOps: return "Bearer " + user_tokens_.at("ops");
      case Who::kWrongToken: return "Bearer " + std::string(server_token_.size(), '0');
      case Who::kNoBearer: return server_token_;
      case Who::kLowerCaseBearer: return "bearer " + user_tokens_.at("ann");
    }
    return "";
  }
  // Whom an Authorization header identifies, by the documented rules: "Bearer " and the
  // server's token (its owner, an administrator) or a user's.
  std::optional<Caller> Identify(const std::string& authorization) const {
    if (authorization == "Bearer " + server_token_) return Caller{"owner", true};
    for (const auto& [name, token] : user_tokens_) {
      if (authorization == "Bearer " + token) return Caller{name, name == "ops"};
    }
    return std::nullopt;
  }

  // What a refused request must leave as it was: the seeded jobs' versions and the
  // number of jobs.
  struct State {
    std::vector<int64_t> versions;
    int64_t jobs = 0;
    bool operator==(const State&) const = default;
  };
  State Now() {
    auto listed = jobs_->manager->List(JobFilter{.limit = 1});
    return State{Versions(), listed.ok() ? listed->value("total", int64_t{-1}) : -2};
  }
  // Whether the seeded jobs have changed since the world was made, or too many are queued.
  bool Changed(const State& now) {
    return now.versions != versions_ || jobs_->manager->ClusterInfo().value("queued", 0) > 64;
  }
  // Whether job `id` has reported where its AM listens (POST .../stack would call it).
  bool KnowsAmAddress(const std::string& id) {
    auto detail = jobs_->manager->Get(id, 0, 0);
    if (!detail.ok()) return false;
    for (const Json& attempt : (*detail)["attempts"]) {
      if (!attempt.value("am_addr", "").empty()) return true;
    }
    return false;
  }

 private:
  std::string Submit(const std::string& yaml, const std::string& user) {
    ParseOptions options;
    options.source_name = "seed.yaml";
    auto parsed = ParseJobSpec(yaml, options);
    if (!parsed.ok()) Die(parsed.status().ToString());
    parsed->spec.user = user;
    auto id = jobs_->manager->Submit(std::move(parsed->spec));
    if (!id.ok()) Die(id.status().ToString());
    return *id;
  }
  // Waits (bounded) until the job is in `state` with `attempts` attempts.
  void WaitFor(const std::string& id, const std::string& state, size_t attempts) {
    for (int i = 0; i < 5000; ++i) {
      Json detail = jobs_->manager->Get(id, 0, 0).value();
      if (detail["state"] == state && detail["attempts"].size() == attempts) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    Die(id + " did not reach " + state);
  }
  void Report(const std::string& id, int attempt, const std::string& body) {
    auto reply = ReportJson(*jobs_->manager, id, attempt, Json::parse(body));
    if (!reply.ok()) Die(reply.status().ToString());
  }

  void Populate() {
    const char* tasks = R"([{"role": "worker", "index": 0, "state": "RUNNING", "progress": 0.5, "heartbeat_rtt_ms": 3},
                            {"role": "worker", "index": 1, "state": "RUNNING", "progress": 0.25}])";
    // job-1: its first attempt fails, the second succeeds.
    std::string done = Submit("name: done\nmax_attempts: 2\nroles:\n  worker:\n    instances: 2\n    cpus: 1\n    memory: 1G\n"
                              "    command: python3 train.py\n", "bob");
    WaitFor(done, "RUNNING", 1);
    std::string first = std::string(R"({"state": "RUNNING", "tasks": )") + tasks + "}";
    Report(done, 1, first);
    jobs_->backend.Finish(done + "/1", ExitInfo{1, 0});
    (void)ReportJson(*jobs_->manager, done, 1, Json::parse(first));  // wakes the scheduler, which sees the attempt end
    WaitFor(done, "RUNNING", 2);
    std::string second = std::string(R"({"state": "SUCCEEDED", "final": true, "message": "done", "tasks": )") + tasks + "}";
    Report(done, 2, second);
    jobs_->backend.Finish(done + "/2", ExitInfo{0, 0});
    (void)ReportJson(*jobs_->manager, done, 2, Json::parse(second));
    WaitFor(done, "SUCCEEDED", 2);
    // job-2: running, with a secret, series, a board and a save request.
    std::string running = Submit(std::string("name: running\nenv:\n  API_KEY: {secret: ") + kSecretValue + "}\n  MODE: fast\n"
                                 "roles:\n  worker:\n    instances: 2\n    cpus: 1\n    command: python3 train.py\n"
                                 "  ps:\n    instances: 1\n    cpus: 1\n    service: true\n    command: python3 ps.py\n", "ann");
    WaitFor(running, "RUNNING", 1);
    (void)jobs_->manager->SaveModel(running);
    Report(running, 1, R"({"state": "RUNNING", "message": "training", "board_url": "http://127.0.0.1:6006/",
      "tasks": [{"role": "worker", "index": 0, "state": "RUNNING", "progress": 0.5, "heartbeat_rtt_ms": 3},
                {"role": "worker", "index": 1, "state": "RUNNING", "progress": 0.25, "heartbeat_rtt_ms": -1},
                {"role": "ps", "index": 0, "state": "RUNNING", "service": true}],
      "series": [{"role": "worker", "index": 0, "samples": [{"t": 1000, "cpu": 50, "rss": 1000000, "progress": 0.5}],
                  "metrics": [{"t": 1000, "step": 10, "name": "loss", "value": 0.5},
                              {"t": 1001, "step": null, "name": "accuracy", "value": 0.75}]},
                 {"role": "ps", "index": 0, "samples": [{"t": 1000, "cpu": 5, "rss": 2000}]}]})");
    // job-3 waits for room behind job-2; job-4 was killed while it waited.
    Submit("name: queued\nroles:\n  worker:\n    instances: 2\n    cpus: 1\n    command: 'true'\n", "ann");
    std::string killed = Submit("name: killed\nroles:\n  worker:\n    command: 'true'\n", "bob");
    if (!jobs_->manager->Kill(killed).ok()) Die("kill");
    // Their logs: progress lines, metric lines, a long line, bytes that are not UTF-8.
    std::string jobs = home_ + "/jobs/";
    std::string text = "epoch 1\nreporter progress:0.25\nreporter metric: loss=0.5 step=10\n" + std::string(3000, 'x') +
                       "\nLoss went \xff\xfe down\r\n\nlast line without newline";
    for (int attempt : {1, 2}) {
      for (int index : {0, 1}) {
        WriteFile(jobs + done + "/attempt-" + std::to_string(attempt) + "/worker-" + std::to_string(index) + ".log", text);
      }
    }
    WriteFile(jobs + running + "/attempt-1/worker-0.log", text);
    WriteFile(jobs + running + "/attempt-1/worker-1.log", "");
    WriteFile(jobs + running + "/attempt-1/ps-0.log", "serving\n");
  }

  std::vector<int64_t> Versions() {
    std::vector<int64_t> versions;
    for (const char* id : {"job-1", "job-2", "job-3", "job-4"}) {
      auto detail = jobs_->manager->Get(id, 0, 0);
      versions.push_back(detail.ok() ? detail->value("version", int64_t{-1}) : -2);
    }
    return versions;
  }

  std::string dir_;
  std::string home_;
  std::unique_ptr<TestJobs> jobs_;
  std::map<std::string, std::string> user_tokens_;
  std::string server_token_;
  std::unique_ptr<ServerAuth> auth_[2];
  RequestMetrics requests_;
  std::unique_ptr<InProcessServer> servers_[2];
  std::vector<int64_t> versions_;
};

std::string WorldDir() {
  std::string base = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
  return base + "/shoal-fuzz-api-" + std::to_string(getpid());
}

// The world of this process, made at the first input and removed (its folder too) at exit.
std::unique_ptr<World> the_world;

World& TheWorld() {
  if (the_world) return *the_world;
  the_world = std::make_unique<World>(WorldDir());
  // After the first world is made, so this runs before the statics it made are destroyed.
  static bool cleanup = std::atexit([] { the_world.reset(); }) == 0;
  (void)cleanup;
  return *the_world;
}

// Percent-encodes what would end or break the request line; `extra` is encoded too.
std::string Encode(std::string_view text, const char* extra) {
  std::string out;
  for (unsigned char c : text) {
    if (c <= 0x20 || c == 0x7f || c == '#' || (c && std::strchr(extra, c))) {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// Splits off the next line of `rest` ('\n'-terminated; the last may lack it; a '\r'
// before the '\n' is dropped).
std::string_view NextLine(std::string_view& rest) {
  size_t end = rest.find('\n');
  std::string_view line = rest.substr(0, end);
  rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

struct Built {
  std::string method;
  std::string bytes;
  bool beyond_loopback = false;
  bool remote_peer = false;
};

Built BuildRequest(std::string_view input, const World& world) {
  Built built;
  std::string_view control = NextLine(input);
  unsigned char c[4] = {'a', '0', '0', '0'};
  for (size_t i = 0; i < 4 && i < control.size(); ++i) c[i] = static_cast<unsigned char>(control[i]);
  const Route& route = kRoutes[static_cast<unsigned char>(c[0] - 'a') % std::size(kRoutes)];
  unsigned method = static_cast<unsigned char>(c[1] - '0') % 16;
  built.method = method < 8 ? route.method : kMethods[method - 8];
  unsigned server = static_cast<unsigned char>(c[2] - '0');
  built.beyond_loopback = server & 1;
  built.remote_peer = server & 2;
  Who who = static_cast<Who>(static_cast<unsigned char>(c[3] - '0') % 8);

  std::string target;
  if (!route.path) {
    std::string path(NextLine(input));
    target = Encode(path.starts_with("/") ? path : "/" + path, "?");
  } else {
    for (const char* p = route.path; *p; ++p) {
      if (p[0] == '{' && p[1] == '}') {
        target += Encode(NextLine(input), "?");
        ++p;
      } else {
        target += *p;
      }
    }
  }
  std::string_view query = NextLine(input);
  if (!query.empty()) target += "?" + Encode(query, "");

  std::string headers = "Host: 127.0.0.1:7480\r\n";
  if (std::string authorization = world.Header(who); !authorization.empty()) {
    headers += "Authorization: " + authorization + "\r\n";
  }
  bool has_length = false;
  while (!input.empty()) {
    std::string_view line = NextLine(input);
    if (line.empty()) break;
    std::string name = Lower(std::string(line.substr(0, line.find(':'))));
    has_length = has_length || name == "content-length" || name == "transfer-encoding";
    headers += std::string(line) + "\r\n";
  }
  std::string_view body = input;
  if (!has_length && (!body.empty() || built.method == "POST" || built.method == "PUT" || built.method == "PATCH")) {
    headers += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  }
  built.bytes = built.method + " " + target + " HTTP/1.1\r\n" + headers + "\r\n" + std::string(body);
  return built;
}

struct Reply {
  int status = 0;
  std::multimap<std::string, std::string> headers;  // names in lower case
  std::string body;

  std::string Header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

// Parses what the server wrote: interim 1xx replies, then one reply. False when malformed.
bool ParseReply(std::string_view raw, bool head, Reply& reply) {
  while (true) {
    size_t end = raw.find("\r\n\r\n");
    if (end == std::string_view::npos) return false;
    std::string_view top = raw.substr(0, end + 2);
    raw.remove_prefix(end + 4);
    std::string_view status_line = NextLine(top);
    if (!status_line.starts_with("HTTP/1.1 ") || status_line.size() < 12) return false;
    reply.status = std::atoi(std::string(status_line.substr(9, 3)).c_str());
    reply.headers.clear();
    while (!top.empty()) {
      std::string_view line = NextLine(top);
      size_t colon = line.find(':');
      if (colon == std::string_view::npos) return false;
      std::string_view value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      reply.headers.emplace(Lower(std::string(line.substr(0, colon))), std::string(value));
    }
    if (reply.status >= 200) break;
  }
  if (head || reply.status == 304) return true;
  if (reply.Header("transfer-encoding") == "chunked") {
    while (true) {
      size_t end = raw.find("\r\n");
      if (end == std::string_view::npos) return false;
      size_t size = std::strtoul(std::string(raw.substr(0, end)).c_str(), nullptr, 16);
      raw.remove_prefix(end + 2);
      if (size == 0) return true;
      if (raw.size() < size + 2) return false;
      reply.body.append(raw.substr(0, size));
      raw.remove_prefix(size + 2);
    }
  }
  std::string length = reply.Header("content-length");
  if (!length.empty() && std::strtoul(length.c_str(), nullptr, 10) != raw.size()) return false;
  reply.body = std::string(raw);
  return true;
}

// What the server made of the request line and headers (before routing).
struct Seen {
  bool parsed = false;
  std::string method;
  std::string path;
  std::string authorization;
  bool ranges = false;
};

// ServerAuth::Requires as server/server_auth.h states it.
bool NeedsToken(const Seen& seen, bool beyond_loopback) {
  if (seen.method == "GET" && seen.path == "/api/v1/health") return false;
  bool api = seen.path.starts_with("/api/") || seen.path.starts_with("/internal/");
  bool read = seen.method == "GET" || seen.method == "HEAD";
  if (api && !read) return true;
  return beyond_loopback && (api || seen.path == "/metrics");
}

class Checker {
 public:
  Checker(World& world, const Built& built, const Seen& seen, const std::string& raw, bool state_kept)
      : world_(world), built_(built), seen_(seen), raw_(raw), state_kept_(state_kept) {}

  void Run() {
    bool head = built_.method == "HEAD";
    if (!ParseReply(raw_, head, reply_)) Fail("the reply is not well-formed HTTP");
    if (reply_.headers.count("exception_what")) Fail("an exception escaped a handler");
    if (reply_.status < 200 || reply_.status >= 500) Fail("status " + std::to_string(reply_.status));
    if (reply_.status >= 400 && !state_kept_) Fail("a refused request changed a job or added one");
    CheckToken();
    bool readable = !head && reply_.status != 304 && reply_.Header("content-encoding").empty();
    Json body;
    if (readable && reply_.Header("content-type").starts_with("application/json")) {
      body = Json::parse(reply_.body, nullptr, false);
      // httplib applies a Range header to any reply, errors included: a slice of JSON.
      if (body.is_discarded() && !seen_.ranges) Fail("a JSON reply that does not parse");
    } else if (readable && reply_.status >= 400) {
      Fail("an error reply that is not JSON");
    }
    if (readable && reply_.status >= 400 && !seen_.ranges) CheckError(body);
    if (seen_.parsed) CheckAccess(readable && !seen_.ranges ? body : Json());
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const {
    std::fprintf(stderr, "api_request_fuzzer: %s\n--- request (%s server, peer %s)\n%s\n--- reply\n%s\n", what.c_str(),
                 built_.beyond_loopback ? "beyond loopback" : "loopback", built_.remote_peer ? "remote" : "loopback",
                 built_.bytes.c_str(), raw_.substr(0, 4000).c_str());
    std::abort();
  }

  void CheckToken() {
    if (!seen_.parsed) return;  // refused before routing: no token check ran
    bool refused = NeedsToken(seen_, built_.beyond_loopback) && !world_.Identify(seen_.authorization);
    if (refused && reply_.status != 401) Fail("a request without a valid token got through");
    if (!refused && reply_.status == 401) Fail("401 for a request that needs no token or carries a valid one");
  }

  void CheckError(const Json& body) {
    if (!body.is_object() || !body.contains("error") || !body["error"].is_object()) {
      Fail("an error reply without {\"error\": {...}}");
    }
    const Json& error = body["error"];
    if (!error.contains("code") || !error["code"].is_string() || !error.contains("message") ||
        !error["message"].is_string() || error["message"].get<std::string>().empty()) {
      Fail("an error without code or message");
    }
    if (error["message"].get<std::string>().find("(HTTP 5") != std::string::npos) Fail("a 5xx relabelled a 4xx");
  }

  void CheckAccess(const Json& body) {
    std::optional<Caller> caller = world_.Identify(seen_.authorization);
    bool ok = reply_.status >= 200 && reply_.status < 300;
    const std::string& path = seen_.path;
    if (ok && (path.starts_with("/internal/") || path == "/api/v1/shutdown") && !(caller && caller->admin)) {
      Fail("a 2xx from an administrators' route for a caller who is not one");
    }
    if (ok && path == "/api/v1/whoami" && body.is_object()) {
      Json expected = caller ? Json{{"user", caller->user}, {"admin", caller->admin}} : Json{{"user", nullptr}, {"admin", false}};
      if (body != expected) Fail("whoami names someone else");
    }
    if (ok && path == "/api/v1/jobs" && seen_.method == "POST" && body.is_object() && caller && !caller->admin) {
      auto job = world_.jobs().Get(body.value("id", ""), 0, 0);
      if (job.ok() && job->value("user", "") != caller->user) Fail("a user's new job belongs to someone else");
    }
    static const std::regex job_route(R"(/api/v1/jobs/([^/]+)(/kill|/logs|/logs/raw|/logs/search|/series|/stack|/save-model)?)");
    std::smatch match;
    if (!std::regex_match(path, match, job_route)) return;
    auto job = world_.jobs().Get(match[1].str(), 0, 0);
    if (!job.ok()) return;
    std::string owner = job->value("user", "");
    std::string sub = match[2].str();
    bool change = sub == "/kill" || sub == "/stack" || sub == "/save-model";
    bool allowed = caller ? caller->admin || caller->user == owner : !change;
    if (ok && !allowed) Fail("a 2xx on " + owner + "'s job for a caller who may not " + (change ? "change" : "read") + " it");
    if (reply_.status == 403 && allowed) Fail("403 on " + owner + "'s job for a caller who may use it");
    if (ok && sub.empty() && body.is_object()) CheckMasked(body);
  }

  // A job's detail shows every secret variable masked.
  void CheckMasked(const Json& detail) {
    if (detail.value("id", "") == "job-2" && reply_.body.find(kSecretValue) != std::string::npos) {
      Fail("the detail of job-2 shows its secret");
    }
    if (!detail.contains("spec") || !detail["spec"].is_object()) return;
    const Json& spec = detail["spec"];
    if (!spec.contains("secrets") || !spec["secrets"].is_array()) return;
    std::vector<const Json*> envs;
    if (spec.contains("env")) envs.push_back(&spec["env"]);
    if (spec.contains("roles") && spec["roles"].is_array()) {
      for (const Json& role : spec["roles"]) {
        if (role.is_object() && role.contains("env")) envs.push_back(&role["env"]);
      }
    }
    for (const Json& name : spec["secrets"]) {
      if (!name.is_string()) continue;
      for (const Json* env : envs) {
        if (env->is_object() && env->contains(name.get<std::string>()) && (*env)[name.get<std::string>()] != kSecretMask) {
          Fail("a job's detail shows the value of its secret " + name.get<std::string>());
        }
      }
    }
  }

  World& world_;
  const Built& built_;
  const Seen& seen_;
  const std::string& raw_;
  bool state_kept_;
  Reply reply_;
};

bool IsStackRequest(const Seen& seen, std::string* id) {
  constexpr std::string_view prefix = "/api/v1/jobs/", suffix = "/stack";
  if (!seen.path.starts_with(prefix) || !seen.path.ends_with(suffix) || seen.path.size() <= prefix.size() + suffix.size()) {
    return false;
  }
  *id = seen.path.substr(prefix.size(), seen.path.size() - prefix.size() - suffix.size());
  return true;
}

}  // namespace
}  // namespace shoal

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shoal;
  World& world = TheWorld();
  Built built = BuildRequest(std::string_view(reinterpret_cast<const char*>(data), size), world);
  Seen seen;
  bool skipped = false;
  auto setup = [&](httplib::Request& req) {
    seen = Seen{true, req.method, req.path, req.get_header_value("Authorization"), !req.ranges.empty()};
    if (req.has_param("wait_ms")) {
      req.params.erase("wait_ms");
      req.params.emplace("wait_ms", "1");
    }
    std::string id;
    if (IsStackRequest(seen, &id) && world.KnowsAmAddress(id)) {
      skipped = true;
      req.method = "GET";
      req.path = "/api/v1/health";  // answered without touching the job
    }
  };
  World::State before = world.Now();
  std::string raw = world.server(built.beyond_loopback).Answer(built.bytes, built.remote_peer ? "10.1.2.3" : "127.0.0.1", setup);
  if (skipped) return -1;
  static const bool verbose = std::getenv("SHOAL_FUZZ_VERBOSE") != nullptr;  // to see what seeds reach
  if (verbose) {
    std::fprintf(stderr, "%s\n    -> %s\n", built.bytes.substr(0, built.bytes.find('\r')).c_str(),
                 raw.substr(0, 300).c_str());
  }
  World::State after = world.Now();
  Checker(world, built, seen, raw, after == before).Run();
  if (world.Changed(after)) the_world.reset();  // the next input starts from the seeded jobs again
  return 0;
}
