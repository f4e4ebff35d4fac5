#include "client/server_connection.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "common/files.h"
#include "common/http_client.h"
#include "common/paths.h"
#include "common/process.h"

namespace shoal {
namespace {

// What answers at a server's URL: a Shoal server (its health check says so), nothing (or
// nothing in time), or another program speaking HTTP there.
struct Probe {
  enum Kind { kShoal, kSilent, kForeign } kind;
  std::string detail;  // why it is not Shoal, for kForeign
};

Probe ProbeServer(const std::string& url) {
  auto reply = HttpJsonClient(url, 2000).Get("/api/v1/health");
  if (reply.ok()) {
    if (reply->is_object() && reply->value("ok", false) == true && reply->contains("backend")) return {Probe::kShoal, ""};
    return {Probe::kForeign, "its GET /api/v1/health reply is not Shoal's"};
  }
  StatusCode code = reply.status().code();
  if (code == StatusCode::kUnavailable || code == StatusCode::kTimeout) return {Probe::kSilent, ""};
  return {Probe::kForeign, "GET /api/v1/health: " + reply.status().message().substr(0, 200)};
}

}  // namespace

Result<std::string> FindServer(const std::string& home) {
  if (const char* url = std::getenv("SHOAL_SERVER"); url && *url) {
    if (Status s = CheckHttpUrl(url); !s.ok()) {
      return InvalidArgument(std::string("SHOAL_SERVER=") + url + " is not an http:// address; fix: set it to the "
                             "server's URL, e.g. SHOAL_SERVER=http://127.0.0.1:7480, or unset it to use --home's server");
    }
    Probe probe = ProbeServer(url);
    if (probe.kind == Probe::kForeign) {
      return InvalidArgument(std::string("SHOAL_SERVER=") + url + " answers, but is not a Shoal server (" + probe.detail +
                             "); fix: set SHOAL_SERVER to the Shoal server's URL, or unset it to use --home's server");
    }
    if (probe.kind == Probe::kSilent) return Unavailable(std::string("the server at SHOAL_SERVER=") + url + " does not answer");
    return std::string(url);
  }
  auto text = ReadFile(ServerInfoPath(home));
  if (!text.ok()) return NotFound("no Shoal server is running for " + home);
  Json info = Json::parse(*text, nullptr, false);
  if (info.is_discarded() || !info.contains("url") || !info["url"].is_string()) {
    return NotFound("no Shoal server is running for " + home);
  }
  std::string url = info["url"].get<std::string>();
  Probe probe = ProbeServer(url);
  if (probe.kind == Probe::kForeign) {
    // the server is gone and another program took its port: a new server may start
    return NotFound("the server recorded in " + ServerInfoPath(home) + " is gone: " + url +
                    " is now answered by a program that is not a Shoal server (" + probe.detail + ")");
  }
  if (probe.kind == Probe::kSilent) return NotFound("the server recorded in " + ServerInfoPath(home) + " does not answer");
  return url;
}

Result<std::string> EnsureServer(const std::string& home) {
  auto found = FindServer(home);
  if (found.ok() || found.status().code() != StatusCode::kNotFound) return found;
  RETURN_IF_ERROR(MakeDirectories(home));
  int lock_fd = open((home + "/start.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd < 0) return Unavailable("cannot create " + home + "/start.lock");
  flock(lock_fd, LOCK_EX);
  found = FindServer(home);  // another CLI may have started it while we waited
  if (found.ok()) {
    close(lock_fd);
    return found;
  }
  int log = open((home + "/server.log").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  auto env = CurrentEnvironment();
  for (const char* name : {"SHOAL_SERVER", "SHOAL_JOB_ID", "SHOAL_ATTEMPT"}) env.erase(name);
  auto pid = RealProcessLauncher::Instance().Spawn({.argv = {SelfExecutable(), "server", "--home", home},
                                                    .env = env,
                                                    .cwd = "/",
                                                    .new_session = true,
                                                    .stdout_fd = log,
                                                    .stderr_fd = log});
  if (log >= 0) close(log);
  if (!pid.ok()) {
    close(lock_fd);
    return pid.status().WithContext("cannot start the local Shoal server");
  }
  Result<std::string> url = Unavailable("the local Shoal server did not start; see " + home + "/server.log");
  for (int i = 0; i < 400; ++i) {
    if (auto exit = RealProcessLauncher::Instance().TryWait(*pid)) break;
    auto ready = FindServer(home);
    if (ready.ok()) {
      url = ready;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  close(lock_fd);
  return url;
}

}  // namespace shoal
