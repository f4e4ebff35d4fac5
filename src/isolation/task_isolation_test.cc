#include "isolation/task_isolation.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

TEST(TaskIsolation, AnOutOfMemoryTaskIsToldWhatItUsedAndWhatToRaise) {
  EXPECT_EQ(OutOfMemoryMessage("worker", 1, 2LL << 30, (2LL << 30) - 4096),
            "worker[1] used more than its 2G of memory (peak 2.0G) and was killed by the kernel; raise roles.worker.memory");
  EXPECT_EQ(OutOfMemoryMessage("ps", 0, 1536LL << 20, 1500LL << 20),
            "ps[0] used more than its 1.5G of memory (peak 1.5G) and was killed by the kernel; raise roles.ps.memory");
}

TEST(TaskIsolation, EachAttemptAndTaskHasAGroupOfItsOwn) {
  CgroupGroup jobs{1, {{"memory", "/sys/fs/cgroup/memory/shoal-1"}, {"pids", "/sys/fs/cgroup/pids/shoal-1"}}};
  CgroupGroup attempt = AttemptGroup(jobs, "job-7", 2);
  EXPECT_EQ(attempt.Dir("memory"), "/sys/fs/cgroup/memory/shoal-1/job-7.2");
  EXPECT_EQ(AmGroup(attempt).Dir("pids"), "/sys/fs/cgroup/pids/shoal-1/job-7.2/am");
  EXPECT_EQ(TaskGroup(attempt, "worker", 3).Dir("memory"), "/sys/fs/cgroup/memory/shoal-1/job-7.2/worker-3");
}

TEST(TaskIsolation, WithoutAGroupItSaysLimitsAreNotEnforcedAndWhy) {
  TaskIsolation none{{}, "no cgroup controllers for memory; fix: run the server as root"};
  EXPECT_FALSE(none.enforced());
  EXPECT_EQ(none.Describe(), "task limits are not enforced: no cgroup controllers for memory; fix: run the server as root");
  TaskIsolation some{{1, {{"memory", "/m/shoal-1"}}}, ""};
  EXPECT_TRUE(some.enforced());
  EXPECT_NE(some.Describe().find("enforced with cgroup v1 (memory) at /m/shoal-1"), std::string::npos) << some.Describe();
}

}  // namespace
}  // namespace shoal
