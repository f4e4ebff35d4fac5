// What Shoal's benchmarks share: a private Shoal server in a scratch home, submitting a
// job through the REST API and timing it, and the median of a series.
//
// Contract:
//  - BenchServer::Start spawns `shoal server --home <scratch> --port 0 <extra args>` and
//    waits (up to 10 s) for its address; the destructor stops it and removes the scratch
//    home unless keep_state() was called (a failed run keeps its logs).
//  - RunBenchJob submits `spec` and waits until it SUCCEEDED; it returns the milliseconds
//    from just before the submit until the last task's program started (as the
//    containers reported) and until SUCCEEDED. A job that failed is an error.
// Thread-safety: one thread.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "common/http_client.h"
#include "common/json.h"
#include "common/status.h"

namespace shoal {

class BenchServer {
 public:
  static Result<BenchServer> Start(const std::string& name, const std::string& shoal, std::vector<std::string> extra_args);
  BenchServer(BenchServer&& other) noexcept;
  BenchServer& operator=(BenchServer&&) = delete;
  ~BenchServer();

  const HttpJsonClient& client() const { return *client_; }
  const std::string& home() const { return home_; }
  void keep_state() { keep_ = true; }

 private:
  BenchServer(std::string name, std::string home, pid_t pid) : name_(std::move(name)), home_(std::move(home)), pid_(pid) {}
  std::string name_;
  std::string home_;
  pid_t pid_ = 0;
  std::optional<HttpJsonClient> client_;
  bool keep_ = false;
};

struct BenchJobTimes {
  double running_ms = 0;    // submit -> the last task's program started
  double succeeded_ms = 0;  // submit -> SUCCEEDED
};

Result<BenchJobTimes> RunBenchJob(const HttpJsonClient& server, const Json& spec);

double Median(std::vector<double> values);

}  // namespace shoal
