// Small helpers over SQLite's C API shared by the server's stores (JobStore, SeriesStore).
//
// Contract:
//  - Statement prepares one SQL statement and finalizes it when it goes out of scope;
//    ok() is false when the SQL did not prepare (the caller reports the database error).
//  - OpenDatabase opens (creating) the file in WAL mode with a 5 s busy timeout, so
//    several connections of one process can read while one writes. The file, its WAL and
//    its shared memory are mode 0600: the history holds secret values.
//  - SqliteError names the database file, what was being done and SQLite's reason.
// Thread-safety: a Statement belongs to one thread; callers guard their connection.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace shoal {

class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  bool ok() const { return stmt_ != nullptr; }
  void Bind(int i, const std::string& text);
  void Bind(int i, int64_t value);
  void Bind(int i, double value);
  void Bind(int i, std::optional<double> value);  // NULL when empty
  void Bind(int i, std::optional<int64_t> value);  // NULL when empty
  int Step();  // SQLITE_ROW, SQLITE_DONE or an error code
  void Reset();  // for the next row of a batch insert; keeps nothing bound
  std::string Text(int col);
  int64_t Int(int col);
  double Double(int col);
  bool IsNull(int col);

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

// Opens the database at path (WAL, synchronous=NORMAL, busy timeout 5 s).
Result<sqlite3*> OpenDatabase(const std::string& path, const std::string& what);
// Runs SQL that returns no rows.
Status ExecSql(sqlite3* db, const std::string& sql, const std::string& what);
Status SqliteError(sqlite3* db, const std::string& what);

}  // namespace shoal
