// ClientContext: what every CLI command shares: where the state lives, how to reach the
// server, how to print errors, and the exit codes.
//
// Exit codes: 0 success (a job that SUCCEEDED), 1 the job failed or was killed, or the
// server failed; 2 bad input (a spec, a flag, an unknown job): nothing was started.
// Thread-safety: one per process.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "common/http_client.h"
#include "common/status.h"

namespace shoal {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitBadInput = 2;

struct ClientContext {
  std::string home;
  bool json = false;

  // The running server, or an error (NotFound: none running).
  Result<HttpJsonClient> Connect() const;
  // The running server, starting the embedded one if none runs.
  Result<HttpJsonClient> ConnectOrStart() const;
};

// Prints "shoal: <message>" to stderr and returns the exit code for the status.
int ReportError(const Status& status);

// For a CLI11 command's callback: runs `body` with the running server; an error becomes
// the command's exit code (CLI::RuntimeError, caught in main).
template <typename F>
void WithServer(const ClientContext& ctx, F body) {
  auto server = ctx.Connect();
  if (!server.ok()) throw CLI::RuntimeError(ReportError(server.status()));
  Status status = body(*server);
  if (!status.ok()) throw CLI::RuntimeError(ReportError(status));
}

}  // namespace shoal
