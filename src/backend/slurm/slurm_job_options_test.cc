#include "backend/slurm/slurm_job_options.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

JobSpec WithSlurm(SlurmSection section, int64_t job_timeout_ms = 0) {
  JobSpec spec;
  spec.slurm = std::move(section);
  spec.timeouts.job_ms = job_timeout_ms;
  return spec;
}

TEST(AttemptSbatchOptions, AJobsOwnOptionReplacesTheAdministratorsDefault) {
  SlurmDefaults defaults{"batch", {"-A ops", "--nice=5", "--mail-type=FAIL"}, {}};
  SlurmSection own;
  own.partition = "gpu";
  own.account = "ml";
  own.extra = {"--nice=10", "--exclusive"};
  EXPECT_EQ(AttemptSbatchOptions(defaults, WithSlurm(own, 30'000)),
            (std::vector<std::string>{"--mail-type=FAIL", "--partition=gpu", "--account=ml", "--nice=10", "--exclusive",
                                      "--time=2", "--signal=B:USR1@90"}));
  EXPECT_EQ(AttemptSbatchOptions(defaults, WithSlurm({})),
            (std::vector<std::string>{"--partition=batch", "-A ops", "--nice=5", "--mail-type=FAIL"}))
      << "without its own, a job gets the defaults";
}

TEST(AttemptSbatchOptions, APriorityBelowNormalIsANiceValueUnlessANiceIsGiven) {
  JobSpec low = WithSlurm({});
  low.priority = kLowPriority;
  EXPECT_EQ(AttemptSbatchOptions({}, low), (std::vector<std::string>{"--nice=100"}));
  low.priority = 0;
  EXPECT_TRUE(AttemptSbatchOptions({}, low).empty());
  low.priority = kHighPriority;
  EXPECT_TRUE(AttemptSbatchOptions({}, low).empty()) << "a negative nice needs privileges: a QOS raises a job";
  low.priority = -7;
  EXPECT_EQ(AttemptSbatchOptions({"", {"--nice=5"}, {}}, low), (std::vector<std::string>{"--nice=5"}));
}

TEST(AttemptSbatchOptions, TimeIsTheJobsThenTheAdministratorsThenTheTimeoutsPlusAMinute) {
  SlurmSection own;
  own.time_ms = 3'600'000;
  const std::string warning = "--signal=B:USR1@90";
  EXPECT_EQ(AttemptSbatchOptions({"", {"--time=10"}, {}}, WithSlurm(own, 30'000)),
            (std::vector<std::string>{"--time=60", warning}));
  EXPECT_EQ(AttemptSbatchOptions({"", {"--time=10", "--signal=USR1@30"}, {}}, WithSlurm({}, 30'000)),
            (std::vector<std::string>{"--time=10", warning}))
      << "the administrator's --signal would kill the tasks: Shoal's replaces it";
  EXPECT_EQ(AttemptSbatchOptions({}, WithSlurm({}, 30'000)), (std::vector<std::string>{"--time=2", warning}));
  EXPECT_TRUE(AttemptSbatchOptions({}, WithSlurm({})).empty()) << "no limit, no warning";
}

TEST(CheckSlurmLocks, ALockedFieldIsRefusedNamingTheAdministratorsChoice) {
  SlurmDefaults defaults{"batch", {"--account=ops"}, {"account", "extra"}};
  SlurmSection own;
  own.partition = "gpu";
  EXPECT_TRUE(CheckSlurmLocks(defaults, own).ok()) << "partition is not locked";
  own.account = "ml";
  Status refused = CheckSlurmLocks(defaults, own);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("slurm.account: this server's administrator keeps the job's account (--account=ops)"),
            std::string::npos)
      << refused.message();
  SlurmSection extra;
  extra.extra = {"--exclusive"};
  EXPECT_NE(CheckSlurmLocks(defaults, extra).message().find("slurm.extra[0]"), std::string::npos);
}

}  // namespace
}  // namespace shoal
