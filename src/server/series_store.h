// SeriesStore: the tasks' time series (resource samples and metric points) in SQLite
// tables of their own beside the job history (same file, its own connection), indexed
// by (job, attempt, role, idx) so one job's series load without touching other jobs.
//
// Contract:
//  - Append adds the points of one report in one transaction (all or nothing).
//  - Each task keeps at most `max_samples` samples and `max_points` metric points, the
//    newest; older ones are deleted as new ones arrive, so a chatty job cannot fill the disk.
//  - Load returns one attempt's series per task, ordered by arrival; with a cursor
//    (the `next` of an earlier Load) only what arrived since.
//  - Errors name the database file.
// Thread-safety: one connection guarded by an internal mutex; safe from any thread.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "protocol/series.h"

struct sqlite3;

namespace shoal {

struct SeriesLimits {
  int64_t max_samples = 20'000;  // per task
  int64_t max_points = 50'000;   // per task
};

// Where a reader stopped: the last sample and point row it has seen.
struct SeriesCursor {
  int64_t sample = 0;
  int64_t point = 0;
};

struct LoadedSeries {
  std::vector<TaskSeries> tasks;
  SeriesCursor next;
};

class SeriesStore {
 public:
  static Result<std::unique_ptr<SeriesStore>> Open(const std::string& path, SeriesLimits limits = {});
  ~SeriesStore();

  Status Append(int64_t job_seq, int attempt, const std::vector<TaskSeries>& series);
  Result<LoadedSeries> Load(int64_t job_seq, int attempt, SeriesCursor after = {});

 private:
  using TaskKey = std::tuple<int64_t, int, std::string, int>;  // job, attempt, role, index
  SeriesStore(sqlite3* db, std::string path, SeriesLimits limits) : db_(db), path_(std::move(path)), limits_(limits) {}
  Status AppendLocked(int64_t job_seq, int attempt, const TaskSeries& task);  // REQUIRES mutex_
  // Deletes the oldest rows of `table` for the task beyond `keep` when it holds too many.
  Status Trim(const char* table, const TaskKey& key, int64_t added, int64_t keep,
              std::map<TaskKey, int64_t>& counts);  // REQUIRES mutex_
  Status Error(const std::string& what);

  std::mutex mutex_;
  sqlite3* db_;
  std::string path_;
  SeriesLimits limits_;
  std::map<TaskKey, int64_t> sample_counts_;  // GUARDED_BY(mutex_), rows per task as last counted
  std::map<TaskKey, int64_t> point_counts_;   // GUARDED_BY(mutex_)
};

}  // namespace shoal
