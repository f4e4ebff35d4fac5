// For the server's tests and the API fuzzer: a started JobManager on the fake backend
// (4 CPUs, 8 GiB) and a fake clock, over a fresh history file that is removed afterwards.
// The caller names the file and the manager's home: tests take both inside a
// ScratchDirectory (testing/scratch_directory.h; not included here, the fuzzer has no gtest).
// Thread-safety: as JobManager; one per test.
#pragma once

#include <unistd.h>

#include <memory>
#include <string>

#include "backend/fake/fake_backend.h"
#include "server/job_manager.h"

namespace shoal {

// An AM's report given as JSON, decoded as the API route decodes it.
inline Result<Json> ReportJson(JobManager& manager, const std::string& id, int attempt, const Json& body) {
  ASSIGN_OR_RETURN(protocol::AttemptReport report, protocol::Decode<protocol::AttemptReport>(body));
  return manager.Report(id, attempt, std::move(report));
}

struct TestJobs {
  TestJobs(std::string db_path, const std::string& home) : path(std::move(db_path)) {
    unlink(path.c_str());
    store = std::move(JobStore::Open(path).value());
    series = std::move(SeriesStore::Open(path).value());
    manager = std::make_unique<JobManager>(*store, *series, backend, clock, "http://127.0.0.1:1", home);
    started = manager->Start().ok();
  }
  ~TestJobs() {
    manager->Stop();
    for (const char* suffix : {"", "-wal", "-shm"}) unlink((path + suffix).c_str());
  }

  std::string path;
  ManualClock clock;  // the scheduler and long polls block on it, woken by changes
  FakeBackend backend{ClusterCapacity{{4, 8LL << 30, 0}, {4, 8LL << 30, 0}}};
  std::unique_ptr<JobStore> store;
  std::unique_ptr<SeriesStore> series;
  std::unique_ptr<JobManager> manager;
  bool started = false;
};

}  // namespace shoal
