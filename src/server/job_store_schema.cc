#include "server/job_store_schema.h"

#include <sqlite3.h>

#include "common/log.h"
#include "server/sqlite_statement.h"

namespace shoal {
namespace {

constexpr const char* kVersion1 =
    "CREATE TABLE IF NOT EXISTS jobs ("
    " seq INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, user TEXT NOT NULL,"
    " framework TEXT NOT NULL, state TEXT NOT NULL, created_ms INTEGER NOT NULL,"
    " summary TEXT NOT NULL, detail TEXT NOT NULL);"
    "CREATE INDEX IF NOT EXISTS jobs_by_state ON jobs(state, seq);"
    "CREATE INDEX IF NOT EXISTS jobs_by_user ON jobs(user, seq);"
    "CREATE TABLE IF NOT EXISTS schema_versions (store TEXT PRIMARY KEY, version INTEGER NOT NULL);";

// The counts are rebuilt from the rows, then kept by the triggers. A job's counts move
// when its state (or name, or user) changes; rows are not deleted by Shoal, but a row
// deleted by hand leaves the counts right too.
constexpr const char* kVersion2 =
    "CREATE TABLE IF NOT EXISTS job_counts ("
    " kind TEXT NOT NULL, value TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY(kind, value)) WITHOUT ROWID;"
    "DELETE FROM job_counts;"
    "CREATE INDEX IF NOT EXISTS jobs_by_name ON jobs(name, state, user);"
    "CREATE INDEX IF NOT EXISTS jobs_by_seq ON jobs(seq, name);"
    "CREATE INDEX IF NOT EXISTS jobs_by_user_state ON jobs(user, state);"
    "INSERT INTO job_counts SELECT 'state', state, COUNT(*) FROM jobs GROUP BY state;"
    "INSERT INTO job_counts SELECT 'user', user, COUNT(*) FROM jobs GROUP BY user;"
    "INSERT INTO job_counts SELECT 'name', name, COUNT(*) FROM jobs GROUP BY name;"
    "CREATE TRIGGER IF NOT EXISTS jobs_counted_in AFTER INSERT ON jobs BEGIN"
    " INSERT INTO job_counts VALUES ('state', NEW.state, 1), ('user', NEW.user, 1), ('name', NEW.name, 1)"
    "  ON CONFLICT(kind, value) DO UPDATE SET n = n + 1;"
    " END;"
    "CREATE TRIGGER IF NOT EXISTS jobs_counted_out AFTER DELETE ON jobs BEGIN"
    " UPDATE job_counts SET n = n - 1 WHERE (kind, value) IN (VALUES ('state', OLD.state), ('user', OLD.user), ('name', OLD.name));"
    " END;"
    "CREATE TRIGGER IF NOT EXISTS jobs_recounted AFTER UPDATE OF state, user, name ON jobs"
    " WHEN OLD.state IS NOT NEW.state OR OLD.user IS NOT NEW.user OR OLD.name IS NOT NEW.name BEGIN"
    " UPDATE job_counts SET n = n - 1 WHERE (kind, value) IN (VALUES ('state', OLD.state), ('user', OLD.user), ('name', OLD.name));"
    " INSERT INTO job_counts VALUES ('state', NEW.state, 1), ('user', NEW.user, 1), ('name', NEW.name, 1)"
    "  ON CONFLICT(kind, value) DO UPDATE SET n = n + 1;"
    " END;";

// Version 3: the distinct names in an FTS5 trigram index (case-sensitive, as instr()), so
// a search of 3 characters or more reads the names holding its trigrams instead of every
// distinct name. A name enters it when job_counts first counts it, also when an older
// server writes the job.
constexpr const char* kVersion3 =
    "CREATE VIRTUAL TABLE IF NOT EXISTS job_names USING fts5(value, tokenize='trigram case_sensitive 1');"
    "DELETE FROM job_names;"
    "INSERT INTO job_names(value) SELECT value FROM job_counts WHERE kind='name';"
    "CREATE TRIGGER IF NOT EXISTS job_names_in AFTER INSERT ON job_counts WHEN NEW.kind='name' BEGIN"
    " INSERT INTO job_names(value) VALUES (NEW.value);"
    " END;";

Result<int> StoredVersion(sqlite3* db, const std::string& what) {
  Statement select(db, "SELECT version FROM schema_versions WHERE store='jobs'");
  if (!select.ok()) return SqliteError(db, what + ": read the schema version");
  return select.Step() == SQLITE_ROW ? static_cast<int>(select.Int(0)) : 1;
}

Result<int64_t> JobCount(sqlite3* db, const std::string& what) {
  Statement count(db, "SELECT COUNT(*) FROM jobs");
  if (!count.ok() || count.Step() != SQLITE_ROW) return SqliteError(db, what + ": count the jobs");
  return count.Int(0);
}

}  // namespace

Status EnsureJobStoreSchema(sqlite3* db, const std::string& what) {
  RETURN_IF_ERROR(ExecSql(db, kVersion1, what));
  ASSIGN_OR_RETURN(int version, StoredVersion(db, what));
  if (version >= kJobStoreSchemaVersion) return Status::Ok();
  // IMMEDIATE: another process upgrading the same history at once waits, then finds it done.
  RETURN_IF_ERROR(ExecSql(db, "BEGIN IMMEDIATE", what));
  auto upgrade = [&]() -> Status {
    ASSIGN_OR_RETURN(int locked_version, StoredVersion(db, what));
    if (locked_version >= kJobStoreSchemaVersion) return Status::Ok();
    ASSIGN_OR_RETURN(int64_t jobs, JobCount(db, what));
    if (jobs > 0) {
      LogInfo(what + ": upgrading the schema from version " + std::to_string(locked_version) + " to " +
              std::to_string(kJobStoreSchemaVersion) + " (" + std::to_string(jobs) + " jobs: counts, list indexes and the names' index)");
    }
    if (locked_version < 2) RETURN_IF_ERROR(ExecSql(db, kVersion2, what));
    RETURN_IF_ERROR(ExecSql(db, kVersion3, what));
    return ExecSql(db, "INSERT OR REPLACE INTO schema_versions VALUES ('jobs', " + std::to_string(kJobStoreSchemaVersion) + ")",
                   what);
  };
  if (Status s = upgrade(); !s.ok()) {
    (void)ExecSql(db, "ROLLBACK", what);
    return s;
  }
  return ExecSql(db, "COMMIT", what);
}

}  // namespace shoal
