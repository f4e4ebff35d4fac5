#include "server/series_store.h"

#include <sqlite3.h>

#include "server/sqlite_statement.h"

namespace shoal {
namespace {

// Binds the task's key to parameters 1-4 (job, attempt, role, idx).
void BindTaskKey(Statement& s, int64_t job_seq, int attempt, const std::string& role, int index) {
  s.Bind(1, job_seq);
  s.Bind(2, static_cast<int64_t>(attempt));
  s.Bind(3, role);
  s.Bind(4, static_cast<int64_t>(index));
}

}  // namespace

Result<std::unique_ptr<SeriesStore>> SeriesStore::Open(const std::string& path, SeriesLimits limits) {
  ASSIGN_OR_RETURN(sqlite3* db, OpenDatabase(path, "the job history's series"));
  std::unique_ptr<SeriesStore> store(new SeriesStore(db, path, limits));
  RETURN_IF_ERROR(ExecSql(db,
                          "CREATE TABLE IF NOT EXISTS samples ("
                          " job INTEGER NOT NULL, attempt INTEGER NOT NULL, role TEXT NOT NULL, idx INTEGER NOT NULL,"
                          " t INTEGER NOT NULL, cpu REAL NOT NULL, rss INTEGER NOT NULL, progress REAL NOT NULL,"
                          " gpu_util REAL, gpu_mem REAL);"
                          "CREATE INDEX IF NOT EXISTS samples_by_task ON samples(job, attempt, role, idx);"
                          "CREATE TABLE IF NOT EXISTS metric_points ("
                          " job INTEGER NOT NULL, attempt INTEGER NOT NULL, role TEXT NOT NULL, idx INTEGER NOT NULL,"
                          " t INTEGER NOT NULL, step INTEGER, name TEXT NOT NULL, value REAL NOT NULL);"
                          "CREATE INDEX IF NOT EXISTS metric_points_by_task ON metric_points(job, attempt, role, idx);",
                          "the job history's series '" + path + "'"));
  return store;
}

SeriesStore::~SeriesStore() { sqlite3_close(db_); }

Status SeriesStore::Error(const std::string& what) { return SqliteError(db_, "the job history's series '" + path_ + "': " + what); }

Status SeriesStore::Append(int64_t job_seq, int attempt, const std::vector<TaskSeries>& series) {
  std::lock_guard lock(mutex_);
  std::string what = "the job history's series '" + path_ + "'";
  RETURN_IF_ERROR(ExecSql(db_, "BEGIN", what));
  for (const TaskSeries& task : series) {
    if (Status s = AppendLocked(job_seq, attempt, task); !s.ok()) {
      (void)ExecSql(db_, "ROLLBACK", what);
      sample_counts_.clear();  // the rolled-back rows were counted
      point_counts_.clear();
      return s;
    }
  }
  return ExecSql(db_, "COMMIT", what);
}

Status SeriesStore::AppendLocked(int64_t job_seq, int attempt, const TaskSeries& task) {
  TaskKey key{job_seq, attempt, task.role, task.index};
  auto insert_rows = [&](const char* sql, const auto& rows, auto bind_row, const char* what) -> Status {
    Statement insert(db_, sql);
    if (!insert.ok()) return Error(std::string("prepare ") + what + " insert");
    for (const auto& row : rows) {
      BindTaskKey(insert, job_seq, attempt, task.role, task.index);
      bind_row(insert, row);
      if (insert.Step() != SQLITE_DONE) return Error(std::string("insert a ") + what);
      insert.Reset();
    }
    return Status::Ok();
  };
  if (!task.samples.empty()) {
    RETURN_IF_ERROR(insert_rows("INSERT INTO samples(job, attempt, role, idx, t, cpu, rss, progress, gpu_util, gpu_mem)"
                                " VALUES(?,?,?,?,?,?,?,?,?,?)",
                                task.samples, [](Statement& s, const ResourceSample& r) {
                                  s.Bind(5, r.t);
                                  s.Bind(6, r.cpu);
                                  s.Bind(7, r.rss);
                                  s.Bind(8, r.progress);
                                  s.Bind(9, r.gpu_util);
                                  s.Bind(10, r.gpu_mem);
                                }, "sample"));
    RETURN_IF_ERROR(Trim("samples", key, static_cast<int64_t>(task.samples.size()), limits_.max_samples, sample_counts_));
  }
  if (!task.metrics.empty()) {
    RETURN_IF_ERROR(insert_rows("INSERT INTO metric_points(job, attempt, role, idx, t, step, name, value) VALUES(?,?,?,?,?,?,?,?)",
                                task.metrics, [](Statement& s, const MetricPoint& p) {
                                  s.Bind(5, p.t);
                                  s.Bind(6, p.step);
                                  s.Bind(7, p.name);
                                  s.Bind(8, p.value);
                                }, "metric point"));
    RETURN_IF_ERROR(Trim("metric_points", key, static_cast<int64_t>(task.metrics.size()), limits_.max_points, point_counts_));
  }
  return Status::Ok();
}

Status SeriesStore::Trim(const char* table, const TaskKey& key, int64_t added, int64_t keep,
                         std::map<TaskKey, int64_t>& counts) {
  const std::string where = " WHERE job=? AND attempt=? AND role=? AND idx=?";
  auto bind_key = [&](Statement& s) { BindTaskKey(s, std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key)); };
  auto it = counts.find(key);
  if (it == counts.end()) {  // first report of this task since the server started: count once
    Statement count(db_, std::string("SELECT COUNT(*) FROM ") + table + where);
    if (!count.ok()) return Error(std::string("prepare count of ") + table);
    bind_key(count);
    if (count.Step() != SQLITE_ROW) return Error(std::string("count ") + table);
    it = counts.emplace(key, count.Int(0)).first;
  } else {
    it->second += added;
  }
  if (it->second <= keep) return Status::Ok();
  // The oldest rows are the lowest rowids of the task: a short walk of the index.
  Statement trim(db_, std::string("DELETE FROM ") + table + " WHERE rowid IN (SELECT rowid FROM " + table + where +
                          " ORDER BY rowid LIMIT ?)");
  if (!trim.ok()) return Error(std::string("prepare trim of ") + table);
  bind_key(trim);
  trim.Bind(5, it->second - keep);
  if (trim.Step() != SQLITE_DONE) return Error(std::string("trim ") + table);
  it->second = keep;
  return Status::Ok();
}

Result<LoadedSeries> SeriesStore::Load(int64_t job_seq, int attempt, SeriesCursor after) {
  std::lock_guard lock(mutex_);
  LoadedSeries loaded;
  loaded.next = after;
  std::map<std::pair<std::string, int>, TaskSeries> tasks;
  auto task_for = [&](Statement& s) -> TaskSeries& {
    std::pair<std::string, int> key{s.Text(1), static_cast<int>(s.Int(2))};
    TaskSeries& task = tasks[key];
    task.role = key.first;
    task.index = key.second;
    return task;
  };
  Statement samples(db_, "SELECT rowid, role, idx, t, cpu, rss, progress, gpu_util, gpu_mem FROM samples"
                         " WHERE job=? AND attempt=? AND rowid>? ORDER BY rowid");
  if (!samples.ok()) return Error("prepare sample load");
  samples.Bind(1, job_seq);
  samples.Bind(2, static_cast<int64_t>(attempt));
  samples.Bind(3, after.sample);
  while (samples.Step() == SQLITE_ROW) {
    ResourceSample s{samples.Int(3), samples.Double(4), samples.Int(5), samples.Double(6), {}, {}};
    if (!samples.IsNull(7)) s.gpu_util = samples.Double(7);
    if (!samples.IsNull(8)) s.gpu_mem = samples.Double(8);
    task_for(samples).samples.push_back(s);
    loaded.next.sample = samples.Int(0);
  }
  Statement points(db_, "SELECT rowid, role, idx, t, step, name, value FROM metric_points"
                        " WHERE job=? AND attempt=? AND rowid>? ORDER BY rowid");
  if (!points.ok()) return Error("prepare metric load");
  points.Bind(1, job_seq);
  points.Bind(2, static_cast<int64_t>(attempt));
  points.Bind(3, after.point);
  while (points.Step() == SQLITE_ROW) {
    MetricPoint p{points.Int(3), {}, points.Text(5), points.Double(6)};
    if (!points.IsNull(4)) p.step = points.Int(4);
    task_for(points).metrics.push_back(std::move(p));
    loaded.next.point = points.Int(0);
  }
  for (auto& [key, task] : tasks) loaded.tasks.push_back(std::move(task));
  return loaded;
}

}  // namespace shoal
