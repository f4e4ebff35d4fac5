#include "server/job_store.h"

#include <algorithm>

#include <sqlite3.h>

#include "common/log.h"
#include "server/job_store_schema.h"
#include "server/sqlite_statement.h"

namespace shoal {
namespace {

std::string DumpSafe(const Json& value) { return value.dump(-1, ' ', false, Json::error_handler_t::replace); }

// A row's detail as a record; a row this server cannot read is named, not guessed at.
Result<JobRecord> FromDetail(int64_t seq, const std::string& text) {
  Json json = Json::parse(text, nullptr, false);
  Result<protocol::JobDetail> detail = json.is_discarded() ? Result<protocol::JobDetail>(InvalidArgument("not JSON"))
                                                            : protocol::Decode<protocol::JobDetail>(json);
  if (!detail.ok()) return Internal("job history row " + std::to_string(seq) + " is damaged: " + detail.status().message());
  return JobRecord::FromDetail(seq, std::move(detail).value());
}

}  // namespace

Result<std::unique_ptr<JobStore>> JobStore::Open(const std::string& path) {
  ASSIGN_OR_RETURN(sqlite3* db, OpenDatabase(path, "the job history"));
  std::unique_ptr<JobStore> store(new JobStore(db, path));
  RETURN_IF_ERROR(EnsureJobStoreSchema(db, "job history '" + path + "'"));
  return store;
}

JobStore::~JobStore() { sqlite3_close(db_); }

Status JobStore::Exec(const std::string& sql) { return ExecSql(db_, sql, "job history '" + path_ + "'"); }

Status JobStore::Error(const std::string& what) { return SqliteError(db_, "job history '" + path_ + "': " + what); }

Status JobStore::Insert(JobRecord& job) {
  std::lock_guard lock(mutex_);
  return InsertLocked(job);
}

Status JobStore::InsertAll(std::vector<JobRecord>& jobs) {
  std::lock_guard lock(mutex_);
  RETURN_IF_ERROR(Exec("BEGIN"));
  for (JobRecord& job : jobs) {
    if (Status s = InsertLocked(job); !s.ok()) {
      (void)Exec("ROLLBACK");
      name_totals_.Forget();
      return s;
    }
  }
  return Exec("COMMIT");
}

Result<std::map<std::string, int64_t>> JobStore::CountByState() {
  std::lock_guard lock(mutex_);
  Statement select(db_, "SELECT value, n FROM job_counts WHERE kind='state' AND n > 0");
  if (!select.ok()) return Error("prepare count by state");
  std::map<std::string, int64_t> counts;
  while (select.Step() == SQLITE_ROW) counts[select.Text(0)] = select.Int(1);
  return counts;
}

Status JobStore::InsertLocked(JobRecord& job) {
  Statement insert(db_, "INSERT INTO jobs(name, user, framework, state, created_ms, summary, detail) VALUES(?,?,?,?,?,'{}','{}')");
  if (!insert.ok()) return Error("prepare insert");
  insert.Bind(1, job.spec.name);
  insert.Bind(2, job.spec.user);
  insert.Bind(3, job.spec.framework);
  insert.Bind(4, std::string(Name(job.state)));
  insert.Bind(5, job.created_ms);
  if (insert.Step() != SQLITE_DONE) return Error("insert");
  name_totals_.Added(job.spec.name);
  job.seq = sqlite3_last_insert_rowid(db_);
  job.id = JobIdFor(job.seq);
  Statement update(db_, "UPDATE jobs SET summary=?, detail=? WHERE seq=?");
  update.Bind(1, DumpSafe(protocol::Encode(job.Summary())));
  update.Bind(2, DumpSafe(protocol::Encode(job.Detail())));
  update.Bind(3, job.seq);
  if (update.Step() != SQLITE_DONE) return Error("insert");
  return Status::Ok();
}

Status JobStore::Update(const JobRecord& job) {
  std::lock_guard lock(mutex_);
  Statement update(db_, "UPDATE jobs SET state=?, summary=?, detail=? WHERE seq=?");
  if (!update.ok()) return Error("prepare update");
  update.Bind(1, std::string(Name(job.state)));
  update.Bind(2, DumpSafe(protocol::Encode(job.Summary())));
  update.Bind(3, DumpSafe(protocol::Encode(job.Detail())));
  update.Bind(4, job.seq);
  if (update.Step() != SQLITE_DONE) return Error("update");
  return Status::Ok();
}

Result<std::vector<JobRecord>> JobStore::LoadUnfinished() {
  std::lock_guard lock(mutex_);
  Statement select(db_, "SELECT seq, detail FROM jobs WHERE state IN ('QUEUED','RUNNING') ORDER BY seq");
  if (!select.ok()) return Error("prepare load");
  std::vector<JobRecord> jobs;
  while (select.Step() == SQLITE_ROW) {
    // A damaged row is logged and left as it is: the other jobs still recover.
    Result<JobRecord> job = FromDetail(select.Int(0), select.Text(1));
    if (job.ok()) {
      jobs.push_back(std::move(job).value());
    } else {
      LogError(job.status().ToString());
    }
  }
  return jobs;
}

Result<std::optional<JobRecord>> JobStore::Load(int64_t seq) {
  std::lock_guard lock(mutex_);
  Statement select(db_, "SELECT detail FROM jobs WHERE seq=?");
  if (!select.ok()) return Error("prepare load");
  select.Bind(1, seq);
  if (select.Step() != SQLITE_ROW) return std::optional<JobRecord>();
  ASSIGN_OR_RETURN(JobRecord job, FromDetail(seq, select.Text(0)));
  return std::optional<JobRecord>(std::move(job));
}

namespace {

// A search of 3 characters or more can be narrowed by the names' trigram index.
bool LongEnoughForTheNameIndex(const std::string& name) {
  int characters = 0;
  for (unsigned char c : name) characters += (c & 0xC0) != 0x80;
  return characters >= 3;
}

// An FTS5 phrase: the text in double quotes, its own double quotes doubled.
std::string Phrase(const std::string& text) {
  std::string phrase = "\"";
  for (char c : text) phrase += c == '"' ? std::string("\"\"") : std::string(1, c);
  return phrase + "\"";
}

// The job_counts rows of the names holding the searched name, as a condition on them:
// instr() decides (case-sensitive, `%` and `_` plain characters), behind the trigram
// index when `indexed`.
std::string NameCondition(bool indexed) {
  return indexed ? " AND value IN (SELECT value FROM job_names WHERE job_names MATCH ?) AND instr(value, ?) > 0"
                 : " AND instr(value, ?) > 0";
}

int BindName(Statement& s, int i, const std::string& name, bool indexed) {
  if (indexed) s.Bind(i++, Phrase(name));
  s.Bind(i++, name);
  return i;
}

}  // namespace

// Through the trigram index a search costs about 1.7 us per name it matches; a scan of
// every distinct name about 0.09 us per name (1,000,000 names: 90 ms). So the index is
// used when it matches at most a twentieth of the names, or kNarrowNameSearch names
// (found out by reading at most that many from it: a few ms). The job count stands in for
// the name count, which only a scan would give.
bool JobStore::NameIndexNarrowsLocked(const std::string& name, int64_t jobs) {
  if (!LongEnoughForTheNameIndex(name)) return false;
  const int64_t narrow = std::max<int64_t>(kNarrowNameSearch, jobs / 20);
  Statement probe(db_, "SELECT COUNT(*) FROM (SELECT rowid FROM job_names WHERE job_names MATCH ? LIMIT ?)");
  if (!probe.ok()) return false;
  probe.Bind(1, Phrase(name));
  probe.Bind(2, narrow + 1);
  return probe.Step() == SQLITE_ROW && probe.Int(0) <= narrow;
}

Result<int64_t> JobStore::JobCountLocked() {
  Statement count(db_, "SELECT TOTAL(n) FROM job_counts WHERE kind='state'");
  if (!count.ok() || count.Step() != SQLITE_ROW) return Error("count jobs");
  return static_cast<int64_t>(count.Double(0));
}

// The page's rows are found in a narrow index (a few bytes a job), then only its own
// rows (summary and detail, about 2 KB each) are read. For the count, a name is searched
// for among the distinct names in job_counts (NameCondition), once: a name-only total is
// remembered (name_totals_) and kept exact. The page then either finds
// the jobs of those names through jobs_by_name, or walks jobs_by_seq newest first and
// tests each job's name where the index holds it, as PageIndex says.
Result<std::pair<std::vector<protocol::JobSummary>, int64_t>> JobStore::List(const JobFilter& filter) {
  std::lock_guard lock(mutex_);
  ASSIGN_OR_RETURN(const int64_t jobs_in_history, JobCountLocked());
  // Whether the trigram index narrows the name (a probe of a few ms): asked only when
  // the distinct names are searched, not when a remembered total and a walk suffice.
  std::optional<bool> narrows;
  auto indexed = [&] {
    if (!narrows) narrows = filter.name && NameIndexNarrowsLocked(*filter.name, jobs_in_history);
    return *narrows;
  };
  // The condition on jobs, the name tested among the distinct names or, `in_row`, in the row.
  auto where = [&](bool in_row) {
    std::string sql = " WHERE 1=1";
    if (filter.state) sql += " AND state=?";
    if (filter.user) sql += " AND user=?";
    if (filter.name && in_row) sql += " AND instr(name, ?) > 0";
    if (filter.name && !in_row) {
      sql += " AND name IN (SELECT value FROM job_counts WHERE kind='name' AND n > 0" + NameCondition(indexed()) + ")";
    }
    return sql;
  };
  auto bind = [&](Statement& s, bool in_row) {
    int i = 1;
    if (filter.state) s.Bind(i++, *filter.state);
    if (filter.user) s.Bind(i++, *filter.user);
    if (filter.name && in_row) s.Bind(i++, *filter.name);
    if (filter.name && !in_row) i = BindName(s, i, *filter.name, indexed());
    return i;
  };
  const bool name_only = filter.name && !filter.state && !filter.user;
  std::optional<int64_t> remembered = name_only ? name_totals_.Find(*filter.name, jobs_in_history) : std::nullopt;
  int64_t total = 0;
  if (remembered) {
    total = *remembered;
  } else {
    ASSIGN_OR_RETURN(total, CountLocked(filter, where(false), filter.name ? NameCondition(indexed()) : std::string(),
                                        [&](Statement& s) { return bind(s, false); }, jobs_in_history));
    if (name_only) name_totals_.Remember(*filter.name, total, jobs_in_history);
  }
  std::vector<protocol::JobSummary> jobs;
  if (filter.offset >= total) return std::make_pair(std::move(jobs), total);
  const std::string index = PageIndex(filter, total, jobs_in_history);
  const bool in_row = filter.name && index == kBySeq;
  Statement select(db_, "SELECT jobs.summary FROM (SELECT seq FROM jobs" + index + where(in_row) +
                            " ORDER BY seq DESC LIMIT ? OFFSET ?) AS page CROSS JOIN jobs ON jobs.seq = page.seq"
                            " ORDER BY page.seq DESC");
  if (!select.ok()) return Error("prepare list");
  int next = bind(select, in_row);
  select.Bind(next, static_cast<int64_t>(filter.limit));
  select.Bind(next + 1, static_cast<int64_t>(filter.offset));
  while (select.Step() == SQLITE_ROW) {
    Json summary = Json::parse(select.Text(0), nullptr, false);
    if (summary.is_discarded()) continue;
    if (auto decoded = protocol::Decode<protocol::JobSummary>(summary); decoded.ok()) jobs.push_back(std::move(decoded).value());
  }
  return std::make_pair(std::move(jobs), total);
}

// No filter, or one: the sum of job_counts' rows; a combination: the rows, through an index.
Result<int64_t> JobStore::CountLocked(const JobFilter& filter, const std::string& where,
                                      const std::string& name_condition, const std::function<int(Statement&)>& bind,
                                      int64_t jobs_in_history) {
  int filters = filter.state.has_value() + filter.user.has_value() + filter.name.has_value();
  if (filters == 0) return jobs_in_history;
  std::string sql = "SELECT COUNT(*) FROM jobs" + where;
  if (filters == 1) {
    sql = std::string("SELECT TOTAL(n) FROM job_counts WHERE kind='") + (filter.state ? "state" : filter.user ? "user" : "name") +
          "'" + (filter.name ? name_condition : " AND value=?");
  }
  Statement count(db_, sql);
  if (!count.ok()) return Error("prepare count");
  bind(count);
  if (count.Step() != SQLITE_ROW) return Error("count");
  return static_cast<int64_t>(count.Double(0));
}

// Where the page's seqs are looked for. With only a name: through jobs_by_name, which
// reads every match (`total`) and sorts them, or down jobs_by_seq, which reads about
// (offset + limit) * all / total entries until the page is full; whichever reads fewer
// (the second reads twice the work per entry). Otherwise SQLite's planner chooses.
std::string JobStore::PageIndex(const JobFilter& filter, int64_t total, int64_t jobs_in_history) {
  if (filter.state || filter.user) return std::string();
  if (!filter.name) return kBySeq;
  double all = static_cast<double>(jobs_in_history), matches = static_cast<double>(total);
  double scanned = (static_cast<double>(filter.offset) + filter.limit) * all / matches;
  return matches <= 2 * scanned ? " INDEXED BY jobs_by_name" : kBySeq;
}

}  // namespace shoal
