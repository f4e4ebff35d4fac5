#include "server/job_store.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "server/series_store.h"
#include "testing/scratch_directory.h"

namespace shoal {
namespace {

JobRecord Job(const std::string& name, const std::string& user) {
  JobRecord job;
  job.spec.name = name;
  job.spec.user = user;
  job.spec.roles.push_back(RoleSpec{.name = "worker", .instances = 2, .command = "true"});
  return job;
}

TEST(JobStore, PersistsAcrossReopenAndFilters) {
  testing_support::ScratchDirectory scratch("store");
  std::string path = scratch / "jobs.db";
  {
    auto store = JobStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    JobRecord a = Job("mnist", "ann"), b = Job("resnet", "bob"), c = Job("mnist-big", "ann");
    ASSERT_TRUE((*store)->Insert(a).ok());
    ASSERT_TRUE((*store)->Insert(b).ok());
    ASSERT_TRUE((*store)->Insert(c).ok());
    EXPECT_EQ(a.id, "job-1");
    EXPECT_EQ(c.id, "job-3");
    b.state = JobState::kSucceeded;
    b.attempts.push_back(AttemptRecord{.number = 1, .state = AttemptState::kSucceeded});
    ASSERT_TRUE((*store)->Update(b).ok());
  }
  auto store = JobStore::Open(path);
  ASSERT_TRUE(store.ok());
  auto unfinished = (*store)->LoadUnfinished();
  ASSERT_TRUE(unfinished.ok());
  ASSERT_EQ(unfinished->size(), 2u);
  EXPECT_EQ((*unfinished)[0].id, "job-1");
  EXPECT_EQ((*unfinished)[0].spec.roles[0].instances, 2);

  auto loaded = (*store)->Load(2);
  ASSERT_TRUE(loaded.ok() && loaded->has_value());
  EXPECT_EQ((*loaded)->state, JobState::kSucceeded);
  EXPECT_EQ((*loaded)->attempts.size(), 1u);

  auto by_user = (*store)->List(JobFilter{.user = "ann"});
  ASSERT_TRUE(by_user.ok());
  EXPECT_EQ(by_user->second, 2);
  EXPECT_EQ(by_user->first[0].id, "job-3") << "newest first";
  auto by_name = (*store)->List(JobFilter{.name = "mnist", .limit = 1, .offset = 1});
  ASSERT_TRUE(by_name.ok());
  EXPECT_EQ(by_name->second, 2);
  ASSERT_EQ(by_name->first.size(), 1u);
  EXPECT_EQ(by_name->first[0].id, "job-1");
  auto by_state = (*store)->List(JobFilter{.state = "SUCCEEDED"});
  ASSERT_TRUE(by_state.ok());
  EXPECT_EQ(by_state->second, 1);
}

TEST(JobStore, TheHistoryAndItsWalAreTheOwnersAlone) {
  testing_support::ScratchDirectory scratch("store-mode");
  std::string path = scratch / "jobs.db";
  {
    int loose = open(path.c_str(), O_CREAT | O_WRONLY, 0644);  // as an older server left it
    ASSERT_GE(loose, 0);
    close(loose);
    chmod(path.c_str(), 0644);
  }
  auto store = JobStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  JobRecord job = Job("secretive", "ann");
  ASSERT_TRUE((*store)->Insert(job).ok());
  for (const char* suffix : {"", "-wal", "-shm"}) {
    struct stat st {};
    ASSERT_EQ(stat((path + suffix).c_str(), &st), 0) << suffix;
    EXPECT_EQ(st.st_mode & 0777, 0600u) << path << suffix << " holds secret values";
  }
  store->reset();
}

TEST(JobStore, AnotherProcessReadingTheHistorySeesEveryWrite) {
  // The server opens the job store and the series store on one file. Opening that file
  // a second time in the process and closing it (as setting its mode with open(2) did)
  // drops every POSIX lock SQLite holds on it: another process that then read the
  // history and closed believed itself the last user, checkpointed and deleted the WAL,
  // and every later write of the server went to the deleted file: invisible to every
  // other process, and lost if the server ended without closing the history.
  testing_support::ScratchDirectory scratch("store-shared");
  std::string path = scratch / "jobs.db";
  auto store = JobStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto series = SeriesStore::Open(path);
  ASSERT_TRUE(series.ok()) << series.status().ToString();
  // Another process's reader: exits 0 when it counts `jobs` rows.
  auto other_process_counts = [&](int jobs) {
    std::string reader = "/usr/bin/python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
                         "n = c.execute(\"SELECT COUNT(*) FROM jobs\").fetchone()[0]; c.close(); sys.exit(n != " +
                         std::to_string(jobs) + ")' " + path;
    return std::system(reader.c_str()) == 0;
  };
  JobRecord first = Job("first", "ann");
  ASSERT_TRUE((*store)->Insert(first).ok());
  EXPECT_TRUE(other_process_counts(1));
  JobRecord second = Job("second", "bob");
  ASSERT_TRUE((*store)->Insert(second).ok());
  EXPECT_TRUE(other_process_counts(2)) << "the write after another process's read is invisible to it";
  store->reset();
  series->reset();
}

TEST(JobStore, ADamagedRowIsNamedAndTheOtherJobsStillRecover) {
  testing_support::ScratchDirectory scratch("store-damaged");
  std::string path = scratch / "jobs.db";
  {
    auto store = JobStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    JobRecord a = Job("mnist", "ann"), b = Job("resnet", "bob");
    ASSERT_TRUE((*store)->Insert(a).ok());
    ASSERT_TRUE((*store)->Insert(b).ok());
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, R"(UPDATE jobs SET detail = json_set(detail, '$.attempts', json('[{"state": "DANCING"}]')) WHERE seq = 1)",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto store = JobStore::Open(path);
  ASSERT_TRUE(store.ok());
  auto damaged = (*store)->Load(1);
  ASSERT_FALSE(damaged.ok());
  EXPECT_NE(damaged.status().message().find("job history row 1 is damaged: job.attempts[0].state must be one of"),
            std::string::npos)
      << damaged.status().message();
  auto unfinished = (*store)->LoadUnfinished();
  ASSERT_TRUE(unfinished.ok());
  ASSERT_EQ(unfinished->size(), 1u) << "the damaged job is left out; the other recovers";
  EXPECT_EQ((*unfinished)[0].id, "job-2");
}

}  // namespace
}  // namespace shoal
