// A history written by the previous server (schema version 1: the jobs table and two
// indexes, no counts) opens, is upgraded once, and lists, counts and searches as before;
// an older server writing to the upgraded history keeps its counts right.
#include "server/job_store_schema.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "server/job_store.h"
#include "testing/scratch_directory.h"

namespace shoal {
namespace {

constexpr const char* kVersion1Schema =
    "CREATE TABLE jobs ("
    " seq INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, user TEXT NOT NULL,"
    " framework TEXT NOT NULL, state TEXT NOT NULL, created_ms INTEGER NOT NULL,"
    " summary TEXT NOT NULL, detail TEXT NOT NULL);"
    "CREATE INDEX jobs_by_state ON jobs(state, seq);"
    "CREATE INDEX jobs_by_user ON jobs(user, seq);";

class JobStoreSchema : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(sqlite3_open(path_.c_str(), &db_), SQLITE_OK); }
  void TearDown() override { sqlite3_close(db_); }
  void Exec(const std::string& sql) { ASSERT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sql; }

  // A job row as the previous server's JobStore::Insert wrote it.
  void InsertAsVersion1(int64_t seq, const std::string& name, const std::string& user, JobState state) {
    JobRecord job;
    job.seq = seq;
    job.id = JobIdFor(seq);
    job.spec.name = name;
    job.spec.user = user;
    job.spec.roles.push_back(RoleSpec{.name = "worker", .instances = 1, .command = "true"});
    job.state = state;
    sqlite3_stmt* insert = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db_, "INSERT INTO jobs VALUES(?,?,?,'generic',?,0,?,?)", -1, &insert, nullptr), SQLITE_OK);
    std::string summary = protocol::Encode(job.Summary()).dump(), detail = protocol::Encode(job.Detail()).dump();
    std::string state_name(Name(state));
    sqlite3_bind_int64(insert, 1, seq);
    sqlite3_bind_text(insert, 2, name.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(insert, 3, user.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(insert, 4, state_name.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(insert, 5, summary.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(insert, 6, detail.c_str(), -1, SQLITE_TRANSIENT);
    EXPECT_EQ(sqlite3_step(insert), SQLITE_DONE);
    sqlite3_finalize(insert);
  }

  int64_t QueryInt(const std::string& sql) {
    sqlite3_stmt* select = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &select, nullptr), SQLITE_OK) << sql;
    int64_t value = sqlite3_step(select) == SQLITE_ROW ? sqlite3_column_int64(select, 0) : -1;
    sqlite3_finalize(select);
    return value;
  }

  testing_support::ScratchDirectory scratch_{"store-schema"};
  std::string path_ = scratch_ / "jobs.db";
  sqlite3* db_ = nullptr;
};

TEST_F(JobStoreSchema, AVersion1HistoryIsUpgradedAndListsAsBefore) {
  Exec(kVersion1Schema);
  ASSERT_NO_FATAL_FAILURE(InsertAsVersion1(1, "mnist", "ann", JobState::kSucceeded));
  ASSERT_NO_FATAL_FAILURE(InsertAsVersion1(2, "resnet", "bob", JobState::kFailed));
  ASSERT_NO_FATAL_FAILURE(InsertAsVersion1(3, "mnist-big", "ann", JobState::kRunning));
  {
    auto store = JobStore::Open(path_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    EXPECT_EQ(QueryInt("SELECT version FROM schema_versions WHERE store='jobs'"), kJobStoreSchemaVersion);
    auto all = (*store)->List(JobFilter{});
    ASSERT_TRUE(all.ok()) << all.status().ToString();
    EXPECT_EQ(all->second, 3);
    ASSERT_EQ(all->first.size(), 3u);
    EXPECT_EQ(all->first[0].id, "job-3") << "newest first";
    auto mnist = (*store)->List(JobFilter{.name = "mnist", .limit = 1, .offset = 1});
    ASSERT_TRUE(mnist.ok());
    EXPECT_EQ(mnist->second, 2);
    ASSERT_EQ(mnist->first.size(), 1u);
    EXPECT_EQ(mnist->first[0].id, "job-1");
    EXPECT_EQ((*store)->List(JobFilter{.user = "ann"})->second, 2);
    EXPECT_EQ(*(*store)->CountByState(), (std::map<std::string, int64_t>{{"FAILED", 1}, {"RUNNING", 1}, {"SUCCEEDED", 1}}));
    auto unfinished = (*store)->LoadUnfinished();
    ASSERT_TRUE(unfinished.ok());
    ASSERT_EQ(unfinished->size(), 1u);
    JobRecord next = unfinished->front();
    next.seq = 0;
    ASSERT_TRUE((*store)->Insert(next).ok());
    EXPECT_EQ(next.id, "job-4") << "ids continue after the upgrade";
  }
  // The previous server opens the upgraded history again: its own writes move the counts.
  ASSERT_NO_FATAL_FAILURE(InsertAsVersion1(5, "mnist", "cid", JobState::kQueued));
  ASSERT_NO_FATAL_FAILURE(InsertAsVersion1(6, "resnet-wide", "cid", JobState::kQueued));  // a name new to the index
  Exec("UPDATE jobs SET state='KILLED' WHERE seq=2");
  auto store = JobStore::Open(path_);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->List(JobFilter{})->second, 6);
  EXPECT_EQ((*store)->List(JobFilter{.name = "mnist"})->second, 4);
  EXPECT_EQ((*store)->List(JobFilter{.name = "net-w"})->second, 1) << "the names' index has the older server's new name";
  EXPECT_EQ((*store)->List(JobFilter{.name = "net"})->second, 2);
  EXPECT_EQ((*store)->List(JobFilter{.user = "cid"})->second, 2);
  EXPECT_EQ(*(*store)->CountByState(),
            (std::map<std::string, int64_t>{{"KILLED", 1}, {"QUEUED", 2}, {"RUNNING", 2}, {"SUCCEEDED", 1}}));
  EXPECT_EQ(QueryInt("SELECT COUNT(*) FROM job_names"), 4) << "each distinct name once";
}

TEST_F(JobStoreSchema, AnUpgradeThatFailsLeavesTheHistoryAsItWas) {
  Exec(kVersion1Schema);
  ASSERT_NO_FATAL_FAILURE(InsertAsVersion1(1, "mnist", "ann", JobState::kSucceeded));
  Exec("CREATE TABLE job_counts (kind TEXT)");  // in the way: version 2's table cannot be made
  Status upgraded = EnsureJobStoreSchema(db_, "job history 'test'");
  EXPECT_FALSE(upgraded.ok());
  EXPECT_NE(upgraded.message().find("job history 'test'"), std::string::npos) << upgraded.message();
  EXPECT_EQ(QueryInt("SELECT COUNT(*) FROM sqlite_master WHERE name='jobs_by_name'"), 0) << "rolled back";
  EXPECT_EQ(QueryInt("SELECT COUNT(*) FROM schema_versions"), 0);
  EXPECT_EQ(QueryInt("SELECT COUNT(*) FROM jobs"), 1);
}

}  // namespace
}  // namespace shoal
