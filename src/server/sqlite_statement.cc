#include "server/sqlite_statement.h"

#include <sys/stat.h>

#include <sqlite3.h>

namespace shoal {

Statement::Statement(sqlite3* db, const std::string& sql) { sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr); }
Statement::~Statement() { sqlite3_finalize(stmt_); }

void Statement::Bind(int i, const std::string& text) { sqlite3_bind_text(stmt_, i, text.c_str(), -1, SQLITE_TRANSIENT); }
void Statement::Bind(int i, int64_t value) { sqlite3_bind_int64(stmt_, i, value); }
void Statement::Bind(int i, double value) { sqlite3_bind_double(stmt_, i, value); }
void Statement::Bind(int i, std::optional<double> value) {
  if (value) sqlite3_bind_double(stmt_, i, *value);
  else sqlite3_bind_null(stmt_, i);
}
void Statement::Bind(int i, std::optional<int64_t> value) {
  if (value) sqlite3_bind_int64(stmt_, i, *value);
  else sqlite3_bind_null(stmt_, i);
}
int Statement::Step() { return sqlite3_step(stmt_); }
void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}
std::string Statement::Text(int col) {
  const unsigned char* text = sqlite3_column_text(stmt_, col);
  return text ? reinterpret_cast<const char*>(text) : "";
}
int64_t Statement::Int(int col) { return sqlite3_column_int64(stmt_, col); }
double Statement::Double(int col) { return sqlite3_column_double(stmt_, col); }
bool Statement::IsNull(int col) { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

Result<sqlite3*> OpenDatabase(const std::string& path, const std::string& what) {
  // The history holds every job's spec, secret values included: its owner's alone. SQLite
  // creates the file (in the home, which is 0700) and gives its WAL and shared-memory files
  // the database's mode; chmod goes by path. The file is never open(2)ed and closed here:
  // closing any descriptor of a file drops every POSIX lock the process holds on it, the
  // locks of the connections already open on it included (the job and series stores share
  // one file), and another process reading the history could then delete the WAL from
  // under the server.
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
    std::string reason = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return Unavailable("cannot open " + what + " '" + path + "': " + reason);
  }
  (void)chmod(path.c_str(), 0600);
  sqlite3_busy_timeout(db, 5000);
  if (Status s = ExecSql(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", what + " '" + path + "'"); !s.ok()) {
    sqlite3_close(db);
    return s;
  }
  for (const char* suffix : {"-wal", "-shm"}) (void)chmod((path + suffix).c_str(), 0600);  // left by an older server
  return db;
}

Status ExecSql(sqlite3* db, const std::string& sql, const std::string& what) {
  char* error = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    std::string reason = error ? error : "unknown error";
    sqlite3_free(error);
    return Unavailable(what + ": " + reason);
  }
  return Status::Ok();
}

Status SqliteError(sqlite3* db, const std::string& what) { return Unavailable(what + ": " + sqlite3_errmsg(db)); }

}  // namespace shoal
