#include "isolation/cgroup_group.h"

#include <gtest/gtest.h>

#include "isolation/fake_root.h"

namespace shoal {
namespace {

// /proc/self/mountinfo of a Debian 12 VM booted with separate (v1) hierarchies; its
// cgroup2 mount carries no controllers.
const char* kHybridMounts =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer\n"
    "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
// One line of /proc/self/mountinfo: a v1 hierarchy of `controllers` showing `root` at `point`.
std::string V1Mount(const std::string& point, const std::string& controllers, const std::string& root = "/") {
  return "1 0 0:1 " + root + " " + point + " rw - cgroup cgroup rw," + controllers + "\n";
}

const char* kHybridCgroups =
    "9:name=systemd:/\n8:pids:/\n6:freezer:/\n4:memory:/batch/ca4d\n2:cpuacct:/\n1:cpu:/\n0::/\n";

TEST_F(FakeRoot, SeparateHierarchiesGiveOneDirectoryPerController) {
  auto group = FindCgroups(kHybridMounts, kHybridCgroups, root_);
  ASSERT_TRUE(group.ok()) << group.status().ToString();
  EXPECT_EQ(group->version, 1);
  EXPECT_EQ(group->Dir("memory"), root_ + "/sys/fs/cgroup/memory/batch/ca4d");
  EXPECT_EQ(group->Dir("cpu"), root_ + "/sys/fs/cgroup/cpu");
  EXPECT_EQ(group->Dir("cpuacct"), root_ + "/sys/fs/cgroup/cpuacct");
  EXPECT_EQ(group->Dir("freezer"), root_ + "/sys/fs/cgroup/freezer");
  EXPECT_EQ(group->Dir("pids"), root_ + "/sys/fs/cgroup/pids");
  EXPECT_EQ(group->Dir("name=systemd"), "") << "a named hierarchy holds no controller";
  EXPECT_EQ(group->Child("shoal-1").Dir("memory"), root_ + "/sys/fs/cgroup/memory/batch/ca4d/shoal-1");
}

TEST_F(FakeRoot, EveryHierarchyHasTheProcesssOwnDirectory) {
  std::string mounts = std::string(kHybridMounts) + V1Mount("/sys/fs/cgroup/devices", "devices") +
                       V1Mount("/sys/fs/cgroup/net_cls,net_prio", "net_cls,net_prio");
  auto dirs = OwnHierarchyDirectories(mounts, std::string(kHybridCgroups) + "5:devices:/d\n3:net_cls,net_prio:/\n", root_);
  std::vector<std::string> expected = {root_ + "/sys/fs/cgroup/cpu", root_ + "/sys/fs/cgroup/cpuacct",
                                       root_ + "/sys/fs/cgroup/memory/batch/ca4d", root_ + "/sys/fs/cgroup/freezer",
                                       root_ + "/sys/fs/cgroup/pids", root_ + "/sys/fs/cgroup/systemd",
                                       root_ + "/sys/fs/cgroup/devices/d", root_ + "/sys/fs/cgroup/net_cls,net_prio",
                                       root_ + "/sys/fs/cgroup/unified"};
  EXPECT_EQ(dirs, expected) << "named hierarchies and a hybrid host's unified mount too; co-mounted ones once";
  EXPECT_EQ(OwnHierarchyDirectories("41 31 0:38 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", "0::/a\n", root_),
            std::vector<std::string>{root_ + "/sys/fs/cgroup/a"});
}

TEST_F(FakeRoot, CoMountedControllersShareTheirDirectory) {
  auto group = FindCgroups(V1Mount("/sys/fs/cgroup/cpu,cpuacct", "cpu,cpuacct") +
                               V1Mount("/sys/fs/cgroup/memory", "memory") + V1Mount("/sys/fs/cgroup/pids", "pids"),
                           "4:cpu,cpuacct:/a\n3:memory:/a\n2:pids:/a\n", root_);
  ASSERT_TRUE(group.ok()) << group.status().ToString();
  EXPECT_EQ(group->Dir("cpu"), group->Dir("cpuacct"));
  EXPECT_EQ(group->Directories().size(), 3u) << "cpu,cpuacct is one directory";
}

TEST_F(FakeRoot, EscapedMountPointsAreReadAsTheKernelMeansThem) {
  auto group = FindCgroups(V1Mount("/cg/my\\040memory", "memory") + V1Mount("/cg/cpu\\9", "cpu") +
                               V1Mount("/cg/pids", "pids"),
                           "3:memory:/a\n2:cpu:/\n1:pids:/\n", root_);
  ASSERT_TRUE(group.ok()) << group.status().ToString();
  EXPECT_EQ(group->Dir("memory"), root_ + "/cg/my memory/a");
  EXPECT_EQ(group->Dir("cpu"), root_ + "/cg/cpu\\9") << "not an octal escape: kept as written";
}

TEST_F(FakeRoot, AMountOfPartOfTheHierarchyShowsOnlyWhatIsBelowItsRoot) {
  // In a container, the memory mount's root is the container's own group.
  std::string mounts = V1Mount("/sys/fs/cgroup/memory", "memory", "/docker/abc") +
                       V1Mount("/sys/fs/cgroup/cpu", "cpu") + V1Mount("/sys/fs/cgroup/pids", "pids");
  auto inside = FindCgroups(mounts, "3:memory:/docker/abc/job\n2:cpu:/\n1:pids:/\n", root_);
  ASSERT_TRUE(inside.ok()) << inside.status().ToString();
  EXPECT_EQ(inside->Dir("memory"), root_ + "/sys/fs/cgroup/memory/job");
  auto outside = FindCgroups(mounts, "3:memory:/elsewhere\n2:cpu:/\n1:pids:/\n", root_);
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.status().message().find("memory"), std::string::npos) << outside.status().message();
}

TEST_F(FakeRoot, TheUnifiedHierarchyWithControllersIsVersionTwo) {
  Write("/sys/fs/cgroup/user.slice/shoal.service/cgroup.controllers", "cpuset cpu io memory hugetlb pids\n");
  auto group = FindCgroups("30 1 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n",
                           "0::/user.slice/shoal.service\n", root_);
  ASSERT_TRUE(group.ok()) << group.status().ToString();
  EXPECT_EQ(group->version, 2);
  EXPECT_EQ(group->Directories(), std::vector<std::string>{root_ + "/sys/fs/cgroup/user.slice/shoal.service"});
  EXPECT_EQ(group->Dir("pids"), group->Dir("memory"));
}

TEST_F(FakeRoot, AUnifiedMountWithoutTheControllersFallsBackToVersionOne) {
  Write("/sys/fs/cgroup/unified/cgroup.controllers", "hugetlb\n");
  auto group = FindCgroups(kHybridMounts, kHybridCgroups, root_);
  ASSERT_TRUE(group.ok()) << group.status().ToString();
  EXPECT_EQ(group->version, 1);
}

TEST_F(FakeRoot, AMountLineCutShortIsSkipped) {
  // Found by fuzz_cgroup_text: a line ending after the type read past its fields.
  auto group = FindCgroups("30 1 0:26 / /sys/fs/cgroup/pids rw - cgroup\n30 1 0:26 / /x rw - cgroup cgroup\n" +
                               std::string(kHybridMounts),
                           kHybridCgroups, root_);
  ASSERT_TRUE(group.ok()) << group.status().ToString();
  EXPECT_EQ(group->Dir("pids"), root_ + "/sys/fs/cgroup/pids");
}

TEST_F(FakeRoot, NoControllersAnywhereNamesWhatIsMissing) {
  Write("/sys/fs/cgroup/cgroup.controllers", "cpuset io\n");
  auto group = FindCgroups("30 1 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", "0::/\n", root_);
  ASSERT_FALSE(group.ok());
  EXPECT_EQ(group.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(group.status().message().find("memory, cpu, pids"), std::string::npos) << group.status().message();
}

TEST(CgroupGroupText, EncodeAndDecodeRoundTrip) {
  CgroupGroup group{1, {{"memory", "/sys/fs/cgroup/memory/a b"}, {"pids", "/sys/fs/cgroup/pids/a b"}}};
  auto decoded = CgroupGroup::Decode(group.Encode());
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->version, 1);
  EXPECT_EQ(decoded->dirs, group.dirs);
}

TEST(CgroupGroupText, GarbageIsRefusedWithTheExpectedForm) {
  for (const char* text : {"", "v3:memory=/a", "v2", "v2:memory", "v2:memory=relative", "v1:pids=/a", "v2:=/a"}) {
    auto decoded = CgroupGroup::Decode(text);
    ASSERT_FALSE(decoded.ok()) << text;
    EXPECT_NE(decoded.status().message().find("expected v1:memory="), std::string::npos) << decoded.status().message();
  }
}

}  // namespace
}  // namespace shoal
