#include "isolation/cgroup_control.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "common/process.h"
#include "isolation/fake_root.h"

namespace shoal {
namespace {

// The kernel makes a group only below one that exists: the hierarchies' roots are there.
void ExpectUsage(const CgroupUsage& got, const CgroupUsage& want) {
  EXPECT_EQ(got.memory_bytes, want.memory_bytes);
  EXPECT_EQ(got.memory_peak_bytes, want.memory_peak_bytes);
  EXPECT_EQ(got.memory_limit_bytes, want.memory_limit_bytes);
  EXPECT_EQ(got.cpu_usage_ns, want.cpu_usage_ns);
  EXPECT_EQ(got.oom_kills, want.oom_kills);
}

class FakeV2 : public FakeRoot {
 protected:
  void SetUp() override {
    FakeRoot::SetUp();
    Write("/sys/fs/cgroup/cgroup.controllers", "cpu memory pids\n");
  }
  CgroupGroup Group(const std::string& relative) {
    std::string dir = root_ + "/sys/fs/cgroup/" + relative;
    return CgroupGroup{2, {{"memory", dir}, {"cpu", dir}, {"pids", dir}}};
  }
};

class FakeV1 : public FakeRoot {
 protected:
  void SetUp() override {
    FakeRoot::SetUp();
    for (const char* c : {"memory", "cpu", "cpuacct", "pids", "freezer"}) {
      Write(std::string("/sys/fs/cgroup/") + c + "/cgroup.procs", "");
    }
  }
  CgroupGroup Group(const std::string& relative) {
    CgroupGroup group{1, {}};
    for (const char* c : {"memory", "cpu", "cpuacct", "pids", "freezer"}) {
      group.dirs[c] = root_ + "/sys/fs/cgroup/" + c + "/" + relative;
    }
    return group;
  }
};

TEST_F(FakeV2, LimitsAreWrittenToTheUnifiedFiles) {
  Write("/sys/fs/cgroup/job/task/memory.swap.max", "max\n");  // the kernel has swap accounting
  ASSERT_TRUE(CreateGroup(Group("job"), {}, /*parent_of_groups=*/true).ok());
  ASSERT_TRUE(CreateGroup(Group("job/task"), CgroupLimits{2LL << 30, 1.5, 4096}).ok());
  EXPECT_EQ(Read("/sys/fs/cgroup/job/cgroup.subtree_control"), "+memory +cpu +pids");
  EXPECT_EQ(Read("/sys/fs/cgroup/job/task/memory.max"), "2147483648");
  EXPECT_EQ(Read("/sys/fs/cgroup/job/task/memory.swap.max"), "0") << "no swap beyond the limit";
  EXPECT_EQ(Read("/sys/fs/cgroup/job/task/cpu.max"), "150000 100000");
  EXPECT_EQ(Read("/sys/fs/cgroup/job/task/pids.max"), "4096");
  EXPECT_EQ(Read("/sys/fs/cgroup/job/memory.max"), "(missing)") << "a group without limits writes none";
  EXPECT_EQ(ProcsFiles(Group("job/task")), std::vector<std::string>{root_ + "/sys/fs/cgroup/job/task/cgroup.procs"});
}

TEST_F(FakeV2, ATinyCpuShareStillGetsAMillisecondQuota) {
  ASSERT_TRUE(CreateGroup(Group("t"), CgroupLimits{0, 0.001, 0}).ok());
  EXPECT_EQ(Read("/sys/fs/cgroup/t/cpu.max"), "1000 100000");
  EXPECT_EQ(Read("/sys/fs/cgroup/t/memory.max"), "(missing)") << "0 bytes means no limit";
  EXPECT_EQ(Read("/sys/fs/cgroup/t/pids.max"), "(missing)");
}

TEST_F(FakeV1, LimitsAreWrittenToEachHierarchy) {
  ASSERT_TRUE(CreateGroup(Group("job"), {}).ok());
  Write("/sys/fs/cgroup/memory/job/task/memory.memsw.limit_in_bytes", "9223372036854771712\n");
  ASSERT_TRUE(CreateGroup(Group("job/task"), CgroupLimits{256LL << 20, 2, 512}).ok());
  EXPECT_EQ(Read("/sys/fs/cgroup/memory/job/task/memory.limit_in_bytes"), "268435456");
  EXPECT_EQ(Read("/sys/fs/cgroup/memory/job/task/memory.memsw.limit_in_bytes"), "268435456");
  EXPECT_EQ(Read("/sys/fs/cgroup/cpu/job/task/cpu.cfs_period_us"), "100000");
  EXPECT_EQ(Read("/sys/fs/cgroup/cpu/job/task/cpu.cfs_quota_us"), "200000");
  EXPECT_EQ(Read("/sys/fs/cgroup/pids/job/task/pids.max"), "512");
  EXPECT_EQ(ProcsFiles(Group("job/task")).size(), 5u) << "a task joins every hierarchy";
  EXPECT_TRUE(DelegateControllers(Group("job")).ok());
  EXPECT_EQ(Read("/sys/fs/cgroup/memory/job/cgroup.subtree_control"), "(missing)") << "v1 has no subtree_control";
}

TEST_F(FakeV1, ADelegatedGroupTakesTheAccountsProcessesButKeepsItsLimits) {
  if (geteuid() != 0) GTEST_SKIP() << "chown needs root";
  ASSERT_TRUE(CreateGroup(Group("job"), CgroupLimits{1 << 30, 0, 0}).ok());
  Write("/sys/fs/cgroup/memory/job/cgroup.procs", "");
  Write("/sys/fs/cgroup/memory/job/tasks", "");
  ASSERT_TRUE(DelegateGroup(Group("job"), 65534, 65534).ok());
  auto owner = [&](const std::string& path) {
    struct stat st {};
    return stat((root_ + path).c_str(), &st) == 0 ? static_cast<int>(st.st_uid) : -1;
  };
  EXPECT_EQ(owner("/sys/fs/cgroup/memory/job"), 65534);
  EXPECT_EQ(owner("/sys/fs/cgroup/pids/job"), 65534) << "every hierarchy";
  EXPECT_EQ(owner("/sys/fs/cgroup/memory/job/cgroup.procs"), 65534);
  EXPECT_EQ(owner("/sys/fs/cgroup/memory/job/tasks"), 65534);
  EXPECT_EQ(owner("/sys/fs/cgroup/memory/job/memory.limit_in_bytes"), 0) << "the limit stays root's";
}

TEST_F(FakeV1, WithoutSwapAccountingOnlyTheMemoryLimitIsWritten) {
  ASSERT_TRUE(CreateGroup(Group("t"), CgroupLimits{1 << 20, 0, 0}).ok());
  EXPECT_EQ(Read("/sys/fs/cgroup/memory/t/memory.limit_in_bytes"), "1048576");
  EXPECT_EQ(Read("/sys/fs/cgroup/memory/t/memory.memsw.limit_in_bytes"), "(missing)");
  EXPECT_EQ(Read("/sys/fs/cgroup/cpu/t/cpu.cfs_quota_us"), "(missing)");
}

TEST_F(FakeV1, UsageIsReadFromTheKernelsAccounting) {
  Write("/sys/fs/cgroup/memory/t/memory.usage_in_bytes", "3000000\n");
  Write("/sys/fs/cgroup/memory/t/memory.stat", "cache 5\nrss 7\ntotal_inactive_file 1000000\n");
  Write("/sys/fs/cgroup/memory/t/memory.max_usage_in_bytes", "5000000\n");
  Write("/sys/fs/cgroup/memory/t/memory.limit_in_bytes", "9223372036854771712\n");
  Write("/sys/fs/cgroup/memory/t/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n");
  Write("/sys/fs/cgroup/cpuacct/t/cpuacct.usage", "123456789\n");
  // Reclaimable page cache is not the task's; v1's huge limit means unlimited.
  ExpectUsage(ReadUsage(Group("t")), {.memory_bytes = 2000000, .memory_peak_bytes = 5000000, .memory_limit_bytes = 0,
                                      .cpu_usage_ns = 123456789, .oom_kills = 2});
  // v1 counts a kill only where the victim was: a container's group below the task's.
  Write("/sys/fs/cgroup/memory/t/shoal-s.job-1.1.worker-0.0/memory.oom_control", "oom_kill_disable 0\noom_kill 1\n");
  EXPECT_EQ(ReadUsage(Group("t")).oom_kills, 2);
  EXPECT_EQ(CountOomKills(Group("t")), 3);
}

TEST_F(FakeRoot, AnUnusedGroupIsRemovedAndOneWithAGroupBelowIsKept) {
  ASSERT_TRUE(MakeDirectories(root_ + "/cg/memory/shoal-a").ok());
  ASSERT_TRUE(MakeDirectories(root_ + "/cg/pids/shoal-a/job-1.1").ok());  // an attempt going on
  CgroupGroup top{1, {{"memory", root_ + "/cg/memory/shoal-a"}, {"pids", root_ + "/cg/pids/shoal-a"}}};
  RemoveGroupIfUnused(top);
  EXPECT_FALSE(std::filesystem::exists(root_ + "/cg/memory/shoal-a"));
  EXPECT_TRUE(std::filesystem::exists(root_ + "/cg/pids/shoal-a/job-1.1"));
  RemoveGroupIfUnused(CgroupGroup{});  // no group: nothing to do
}

TEST_F(FakeRoot, GroupsLeftByAnAttemptsContainersAreRemovedByTheirNamesAndNoOthers) {
  for (const char* dir : {"/cg/devices/shoal-s.job-1.1.worker-0.0", "/cg/devices/shoal-s.job-1.1.ps-0.1/below",
                          "/cg/blkio/shoal-s.job-1.1.worker-0.0", "/cg/devices/shoal-s.job-1.10.worker-0.0",
                          "/cg/devices/other"}) {
    ASSERT_TRUE(MakeDirectories(root_ + dir).ok());
  }
  Write("/cg/devices/shoal-s.job-1.1.file", "a file, not a group");
  EXPECT_EQ(RemoveGroupsNamed({root_ + "/cg/devices", root_ + "/cg/blkio", root_ + "/cg/missing"}, "shoal-s.job-1.1."),
            3);
  EXPECT_FALSE(std::filesystem::exists(root_ + "/cg/devices/shoal-s.job-1.1.worker-0.0"));
  EXPECT_FALSE(std::filesystem::exists(root_ + "/cg/devices/shoal-s.job-1.1.ps-0.1"));
  EXPECT_FALSE(std::filesystem::exists(root_ + "/cg/blkio/shoal-s.job-1.1.worker-0.0"));
  EXPECT_TRUE(std::filesystem::exists(root_ + "/cg/devices/shoal-s.job-1.10.worker-0.0")) << "attempt 10 is another";
  EXPECT_TRUE(std::filesystem::exists(root_ + "/cg/devices/other"));
  EXPECT_EQ(RemoveGroupsNamed({root_ + "/cg/devices"}, ""), 0) << "an empty prefix names nothing";
  EXPECT_TRUE(std::filesystem::exists(root_ + "/cg/devices/other"));
}

TEST_F(FakeV2, UsageIsReadFromTheKernelsAccounting) {
  Write("/sys/fs/cgroup/t/memory.current", "4096000\n");
  Write("/sys/fs/cgroup/t/memory.stat", "anon 1\ninactive_file 96000\n");
  Write("/sys/fs/cgroup/t/memory.max", "max\n");
  Write("/sys/fs/cgroup/t/memory.events", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\noom_group_kill 0\n");
  Write("/sys/fs/cgroup/t/cpu.stat", "usage_usec 2500\nuser_usec 2000\n");
  // Without memory.peak (before Linux 5.19) the peak is the use now.
  ExpectUsage(ReadUsage(Group("t")), {.memory_bytes = 4000000, .memory_peak_bytes = 4096000, .memory_limit_bytes = 0,
                                      .cpu_usage_ns = 2'500'000, .oom_kills = 1});
  Write("/sys/fs/cgroup/t/memory.peak", "8000000\n");
  Write("/sys/fs/cgroup/t/memory.max", "8388608\n");
  ExpectUsage(ReadUsage(Group("t")), {.memory_bytes = 4000000, .memory_peak_bytes = 8000000,
                                      .memory_limit_bytes = 8388608, .cpu_usage_ns = 2'500'000, .oom_kills = 1});
  EXPECT_EQ(CountOomKills(Group("t")), 1) << "v2 counts below the group in its own file";
}

TEST_F(FakeV2, ProcessesAreListedFromTheGroupAndEveryGroupBelow) {
  Write("/sys/fs/cgroup/a/cgroup.procs", "");
  Write("/sys/fs/cgroup/a/am/cgroup.procs", "11\n");
  Write("/sys/fs/cgroup/a/worker-0/cgroup.procs", "12\n13\n");
  std::vector<pid_t> pids = ProcessesIn(Group("a"));
  std::sort(pids.begin(), pids.end());
  EXPECT_EQ(pids, (std::vector<pid_t>{11, 12, 13}));
}

// The kernel's own groups, where this host lets the test make one: the limits hold.
class RealCgroup : public ::testing::Test {
 protected:
  void SetUp() override {
    auto own = FindOwnCgroups();
    if (!own.ok() || geteuid() != 0) GTEST_SKIP() << "no cgroups to create here";
    group_ = own->Child("shoal-test-" + std::to_string(getpid()));
    if (Status s = CreateGroup(group_, CgroupLimits{64LL << 20, 1, 64}); !s.ok()) GTEST_SKIP() << s.ToString();
  }
  void TearDown() override {
    if (group_.empty()) return;
    KillGroup(group_);
    RemoveGroup(group_);
    for (const std::string& dir : group_.Directories()) EXPECT_NE(access(dir.c_str(), F_OK), 0) << dir << " is left";
  }
  pid_t Start(const std::string& script) {
    auto pid = RealProcessLauncher::Instance().Spawn(
        {.argv = {"/bin/sh", "-c", script}, .env = {{"PATH", "/usr/bin:/bin"}}, .join_cgroups = ProcsFiles(group_)});
    EXPECT_TRUE(pid.ok()) << pid.status().ToString();
    return pid.ok() ? *pid : 0;
  }
  CgroupGroup group_;
};

TEST_F(RealCgroup, AProcessOverTheMemoryLimitIsKilledAndCounted) {
  pid_t shell = Start("/usr/bin/python3 -c 'x = b\"x\" * (200 << 20)'; exit 0");  // 200 MiB against 64
  RealProcessLauncher::Instance().Wait(shell);
  CgroupUsage usage = ReadUsage(group_);
  EXPECT_GE(usage.oom_kills, 1);
  EXPECT_EQ(usage.memory_limit_bytes, 64LL << 20);
  EXPECT_GE(usage.memory_peak_bytes, 60LL << 20) << "the peak reached the limit";
  EXPECT_GT(usage.cpu_usage_ns, 0);
}

TEST_F(RealCgroup, KillEndsDaemonsThatLeftTheirSession) {
  pid_t shell = Start("setsid sleep 301 & setsid sh -c 'sleep 302 & wait' & exit 0");
  RealProcessLauncher::Instance().Wait(shell);
  for (int i = 0; i < 200 && ProcessesIn(group_).size() < 3; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::vector<pid_t> daemons = ProcessesIn(group_);
  ASSERT_EQ(daemons.size(), 3u) << "two sleeps and a shell outlived the program";
  EXPECT_GE(KillGroup(group_) + (group_.version == 2 ? 3 : 0), 3);
  EXPECT_TRUE(ProcessesIn(group_).empty());
  for (pid_t pid : daemons) EXPECT_FALSE(ProcessRunning(pid)) << pid;
}

TEST_F(RealCgroup, TooManyProcessesAreRefusedByThePidsLimit) {
  pid_t shell = Start("i=0; while [ $i -lt 100 ]; do sleep 30 & i=$((i+1)); done 2>/dev/null; wait");
  for (int i = 0; i < 400 && ProcessesIn(group_).size() < 32; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the rest are refused meanwhile
  size_t held = ProcessesIn(group_).size();
  EXPECT_LE(held, 64u) << "pids.max is 64";
  EXPECT_GE(held, 32u) << "the shell started sleeps until the limit refused more";
  KillGroup(group_);
  RealProcessLauncher::Instance().Wait(shell);
}

}  // namespace
}  // namespace shoal
