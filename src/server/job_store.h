// JobStore: the job history in SQLite. It survives server restarts; the server reloads
// its unfinished jobs at start (not the others) and writes every change through.
//
// Contract:
//  - Insert assigns the job's seq and id. Update writes the whole record.
//  - List filters by state, user and a name substring (case-sensitive, as instr()), newest
//    first, with limit/offset. It does not load every job: totals come from per-state,
//    per-user and per-name counts, pages from narrow indexes (job_store_schema.h); with
//    1,000,000 jobs a page takes a few ms. A name search of 3 characters or more that
//    few names match is answered through the names' trigram index;
//    a shorter or broader one reads every distinct name (its cost grows with how many
//    names differ, not with how many jobs there are), once: the total is remembered
//    (NameSearchTotals) and kept exact as jobs are added, so the same search again, or
//    its next page, costs a few ms. A broad search's page walks the newest jobs and tests
//    each name; it never lists the matching names.
//  - Errors name the database file.
//  - Time series (samples, metric points) live in SeriesStore's tables, not here.
// Thread-safety: one connection guarded by an internal mutex; safe from any thread.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "server/job_record.h"
#include "server/name_search_totals.h"

struct sqlite3;

namespace shoal {

class Statement;

struct JobFilter {
  std::optional<std::string> state;
  std::optional<std::string> user;
  std::optional<std::string> name;  // substring
  int limit = 50;
  int offset = 0;
};

class JobStore {
 public:
  static Result<std::unique_ptr<JobStore>> Open(const std::string& path);
  ~JobStore();

  Status Insert(JobRecord& job);
  // Inserts every job in one transaction (imports, benchmarks); all or nothing.
  Status InsertAll(std::vector<JobRecord>& jobs);
  Status Update(const JobRecord& job);
  Result<std::vector<JobRecord>> LoadUnfinished();
  Result<std::optional<JobRecord>> Load(int64_t seq);
  // Summaries matching the filter, and how many match in all.
  Result<std::pair<std::vector<protocol::JobSummary>, int64_t>> List(const JobFilter& filter);
  // How many jobs of the history are in each state (for /metrics).
  Result<std::map<std::string, int64_t>> CountByState();

 private:
  JobStore(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  Status InsertLocked(JobRecord& job);  // REQUIRES mutex_
  // How many jobs match; `where` and `bind` are List's. REQUIRES mutex_
  Result<int64_t> CountLocked(const JobFilter& filter, const std::string& where, const std::string& name_condition,
                              const std::function<int(Statement&)>& bind, int64_t jobs_in_history);
  // How many jobs the history holds, from job_counts. REQUIRES mutex_
  Result<int64_t> JobCountLocked();
  // Whether the names' trigram index narrows a search for `name` to at most a twentieth
  // of the jobs or kNarrowNameSearch names (else every distinct name is read: faster for
  // broad searches).
  bool NameIndexNarrowsLocked(const std::string& name, int64_t jobs_in_history);
  static constexpr int kNarrowNameSearch = 2000;
  // " INDEXED BY ..." for the query of List's page, or "".
  static std::string PageIndex(const JobFilter& filter, int64_t total, int64_t jobs_in_history);
  static constexpr const char* kBySeq = " INDEXED BY jobs_by_seq";
  Status Exec(const std::string& sql);
  Status Error(const std::string& what);

  std::mutex mutex_;
  sqlite3* db_;
  std::string path_;
  NameSearchTotals name_totals_;  // GUARDED_BY mutex_
};

}  // namespace shoal
