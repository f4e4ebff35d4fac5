// JobStore::List against a brute-force reading of the same jobs: every filter, name
// substring (case, `%`, `_`, GLOB and LIKE characters, quotes, non-ASCII) and page gives
// what a scan of every job with instr() gives, whichever index the page is read through.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <sqlite3.h>

#include "server/job_store.h"
#include "testing/scratch_directory.h"

namespace shoal {
namespace {

struct Expected {
  std::vector<std::string> ids;  // the page
  int64_t total = 0;
};

class JobStoreList : public ::testing::Test {
 protected:
  void SetUp() override { store_ = std::move(JobStore::Open(path_).value()); }
  void TearDown() override { store_.reset(); }

  void Add(const std::string& name, const std::string& user, JobState state) {
    JobRecord job;
    job.spec.name = name;
    job.spec.user = user;
    job.spec.roles.push_back(RoleSpec{.name = "worker", .instances = 1, .command = "true"});
    ASSERT_TRUE(store_->Insert(job).ok());
    if (state != JobState::kQueued) {
      job.state = state;
      ASSERT_TRUE(store_->Update(job).ok());
    }
    all_.push_back(job);
  }

  // What a scan of every job, newest first, with instr()'s meaning of a substring gives.
  Expected BruteForce(const JobFilter& filter) const {
    Expected expected;
    for (auto it = all_.rbegin(); it != all_.rend(); ++it) {
      if (filter.state && *filter.state != Name(it->state)) continue;
      if (filter.user && *filter.user != it->spec.user) continue;
      if (filter.name && it->spec.name.find(*filter.name) == std::string::npos) continue;
      if (expected.total >= filter.offset && expected.total < filter.offset + filter.limit) expected.ids.push_back(it->id);
      ++expected.total;
    }
    return expected;
  }

  void ExpectSameAsBruteForce(const JobFilter& filter) {
    auto listed = store_->List(filter);
    ASSERT_TRUE(listed.ok()) << listed.status().ToString();
    std::vector<std::string> ids;
    for (const auto& summary : listed->first) ids.push_back(summary.id);
    Expected expected = BruteForce(filter);
    EXPECT_EQ(listed->second, expected.total) << Describe(filter);
    EXPECT_EQ(ids, expected.ids) << Describe(filter);
  }

  static std::string Describe(const JobFilter& filter) {
    return "state=" + filter.state.value_or("-") + " user=" + filter.user.value_or("-") + " name='" +
           filter.name.value_or("-") + "' limit=" + std::to_string(filter.limit) + " offset=" + std::to_string(filter.offset);
  }

  testing_support::ScratchDirectory scratch_{"store-list"};
  std::string path_ = scratch_ / "jobs.db";
  std::unique_ptr<JobStore> store_;
  std::vector<JobRecord> all_;
};

TEST_F(JobStoreList, EveryFilterAndPageIsWhatAScanOfEveryJobGives) {
  const std::vector<std::string> names = {
      "train-1",    "train-10",    "train-99",   "Train-99",   "TRAIN",      "mnist_ddp", "mnistXddp", "50%-done",
      "50x-done",   "a*b?[c]",     "ab",         "it's \"q\"", "résumé-été", "日本語-run", "a",         "x",
  };
  const std::vector<JobState> states = {JobState::kSucceeded, JobState::kFailed, JobState::kKilled,
                                        JobState::kSucceeded, JobState::kQueued};
  for (int i = 0; i < 400; ++i) {
    // Skewed: train-1 is most of the history, the rest are rare.
    const std::string& name = i % 3 ? names[0] : names[(i / 3) % names.size()];
    ASSERT_NO_FATAL_FAILURE(Add(name, "user" + std::to_string(i % 7), states[i % states.size()]));
  }
  const std::vector<std::optional<std::string>> queries = {
      std::nullopt, "train", "train-1", "train-10", "rain-9", "Train", "TRAIN", "%", "_", "50%", "mnist_", "a*b",
      "?",          "[c]",   "'",       "\"q\"",    "é",      "語-r",  "a",     "ab", "zzz",  "",       "n-1",
  };
  const std::vector<std::pair<int, int>> pages = {{50, 0}, {1, 0}, {7, 3}, {5, 120}, {50, 250}, {1000, 0}, {10, 399}, {10, 5000}};
  for (const auto& query : queries) {
    for (const auto& [limit, offset] : pages) {
      ExpectSameAsBruteForce(JobFilter{.name = query, .limit = limit, .offset = offset});
    }
    ExpectSameAsBruteForce(JobFilter{.state = "FAILED", .name = query, .limit = 20, .offset = 3});
    ExpectSameAsBruteForce(JobFilter{.user = "user3", .name = query, .limit = 20, .offset = 0});
    ExpectSameAsBruteForce(JobFilter{.state = "SUCCEEDED", .user = "user2", .name = query, .limit = 9, .offset = 9});
  }
  for (const auto& [limit, offset] : pages) {
    ExpectSameAsBruteForce(JobFilter{.state = "KILLED", .limit = limit, .offset = offset});
    ExpectSameAsBruteForce(JobFilter{.user = "user5", .limit = limit, .offset = offset});
    ExpectSameAsBruteForce(JobFilter{.state = "QUEUED", .user = "user0", .limit = limit, .offset = offset});
  }
  ExpectSameAsBruteForce(JobFilter{.user = "nobody"});
  ExpectSameAsBruteForce(JobFilter{.state = "RUNNING"});
}

TEST_F(JobStoreList, CountsFollowEachJobsStateChanges) {
  ASSERT_NO_FATAL_FAILURE(Add("mnist", "ann", JobState::kQueued));
  ASSERT_NO_FATAL_FAILURE(Add("mnist", "bob", JobState::kQueued));
  JobRecord& job = all_[0];
  for (JobState state : {JobState::kRunning, JobState::kRunning, JobState::kFailed}) {
    job.state = state;
    ASSERT_TRUE(store_->Update(job).ok());
    auto counts = store_->CountByState();
    ASSERT_TRUE(counts.ok());
    EXPECT_EQ(*counts, (std::map<std::string, int64_t>{{"QUEUED", 1}, {std::string(Name(state)), 1}}));
    ExpectSameAsBruteForce(JobFilter{.state = std::string(Name(state))});
    ExpectSameAsBruteForce(JobFilter{.state = "QUEUED"});
    ExpectSameAsBruteForce(JobFilter{});
  }
}

// A search's total is remembered (NameSearchTotals): it stays exact as jobs are added
// between searches, and a job another writer adds makes it counted again.
TEST_F(JobStoreList, ARepeatedSearchStaysExactAsJobsAreAddedByThisStoreOrAnother) {
  const std::vector<std::string> queries = {"train", "train-1", "ddp", "n-", "", "zzz"};
  const std::vector<std::string> names = {"train-1", "train-12", "mnist_ddp", "bert"};
  for (int round = 0; round < 12; ++round) {
    for (const auto& query : queries) {
      ExpectSameAsBruteForce(JobFilter{.name = query, .limit = 3, .offset = round % 4});
    }
    ASSERT_NO_FATAL_FAILURE(Add(names[round % names.size()], "ann", JobState::kSucceeded));
  }
  auto before = store_->List(JobFilter{.name = "train"});
  ASSERT_TRUE(before.ok());
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &other), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(other,
                         "INSERT INTO jobs(name, user, framework, state, created_ms, summary, detail) "
                         "VALUES('train-other', 'bob', '', 'SUCCEEDED', 0, '{}', '{}')",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(other);
  auto after = store_->List(JobFilter{.name = "train"});
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->second, before->second + 1);
}

}  // namespace
}  // namespace shoal
