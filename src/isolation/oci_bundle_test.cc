#include "isolation/oci_bundle.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>

#include <gtest/gtest.h>

#include "testing/scratch_directory.h"

namespace shoal {
namespace {

OciBundleSpec TaskBundle() {
  return {.rootfs = "/var/lib/shoal/jobs/.images/abc/rootfs",
          .args = {"/bin/sh", "-c", "exec python3 train.py"},
          .env = {{"PATH", "/usr/bin:/bin"}, {"RANK", "1"}},
          .cwd = "/home/ann/project",
          .host_uid = 1001,
          .host_gid = 1002,
          .scratch = {"/var/lib/shoal/jobs"},
          .binds = {"/var/lib/shoal/jobs/job-1/attempt-1/worker-1", "/home/ann/project"},
          .devices = {{"/dev/nvidia3", 'c', 195, 3}}};
}

const Json* MountAt(const Json& config, const std::string& destination) {
  for (const Json& mount : config["mounts"]) {
    if (mount["destination"] == destination) return &mount;
  }
  return nullptr;
}

bool Has(const Json& list, const std::string& item) {
  return std::find(list.begin(), list.end(), Json(item)) != list.end();
}

TEST(OciBundle, TheProcessIsTheCommandWithItsEnvironmentAsRootOfItsOwnUserNamespace) {
  Json config = OciConfig(TaskBundle());
  const Json& process = config["process"];
  EXPECT_EQ(process["args"], Json({"/bin/sh", "-c", "exec python3 train.py"}));
  EXPECT_EQ(process["env"], Json({"PATH=/usr/bin:/bin", "RANK=1"}));
  EXPECT_EQ(process["cwd"], "/home/ann/project");
  EXPECT_EQ(process["user"]["uid"], 0);
  EXPECT_TRUE(process["noNewPrivileges"].get<bool>());
  EXPECT_FALSE(process.contains("capabilities")) << "no capability, even inside";
  // Root inside is the task's account outside, and nothing else is mapped.
  EXPECT_EQ(config["linux"]["uidMappings"], Json::parse(R"([{"containerID":0,"hostID":1001,"size":1}])"));
  EXPECT_EQ(config["linux"]["gidMappings"], Json::parse(R"([{"containerID":0,"hostID":1002,"size":1}])"));
}

TEST(OciBundle, OnlyMountAndUserNamespacesAreNewSoNetworkPidsAndIpcAreTheHosts) {
  Json config = OciConfig(TaskBundle());
  std::vector<std::string> types;
  for (const Json& ns : config["linux"]["namespaces"]) types.push_back(ns["type"]);
  EXPECT_EQ(types, (std::vector<std::string>{"user", "mount"}));
}

TEST(OciBundle, TheImageIsReadOnlyAndTheTaskFoldersAreMountedWritableAtTheirPaths) {
  Json config = OciConfig(TaskBundle());
  EXPECT_EQ(config["root"]["path"], "/var/lib/shoal/jobs/.images/abc/rootfs");
  EXPECT_TRUE(config["root"]["readonly"].get<bool>());
  for (const std::string path : {"/var/lib/shoal/jobs/job-1/attempt-1/worker-1", "/home/ann/project"}) {
    const Json* mount = MountAt(config, path);
    ASSERT_NE(mount, nullptr) << path;
    EXPECT_EQ((*mount)["source"], path);
    EXPECT_TRUE(Has((*mount)["options"], "rw")) << path;
  }
  ASSERT_NE(MountAt(config, "/tmp"), nullptr);
  EXPECT_EQ((*MountAt(config, "/tmp"))["type"], "tmpfs");
  // The task's folder is mounted on a tmpfs where the image has only its parent's parent.
  auto at = [&](const std::string& destination) {
    for (size_t i = 0; i < config["mounts"].size(); ++i) {
      if (config["mounts"][i]["destination"] == destination) return i;
    }
    return config["mounts"].size();
  };
  EXPECT_EQ((*MountAt(config, "/var/lib/shoal/jobs"))["type"], "tmpfs");
  EXPECT_LT(at("/var/lib/shoal/jobs"), at("/var/lib/shoal/jobs/job-1/attempt-1/worker-1"));
  ASSERT_NE(MountAt(config, "/sys"), nullptr);
  EXPECT_TRUE(Has((*MountAt(config, "/sys"))["options"], "ro"));
  ASSERT_NE(MountAt(config, "/etc/resolv.conf"), nullptr);
  EXPECT_TRUE(Has((*MountAt(config, "/etc/resolv.conf"))["options"], "ro"));
  EXPECT_EQ((*MountAt(config, "/dev/shm"))["source"], "/dev/shm") << "ranks share memory across containers";
}

TEST(OciBundle, GpusAreBoundAndAllowedAndEverythingElseDenied) {
  Json config = OciConfig(TaskBundle());
  ASSERT_NE(MountAt(config, "/dev/nvidia3"), nullptr);
  const Json& rules = config["linux"]["resources"]["devices"];
  EXPECT_EQ(rules[0], Json::parse(R"({"allow":false,"access":"rwm"})"));
  bool allowed = false;
  for (const Json& rule : rules) allowed = allowed || (rule["allow"] == true && rule.value("major", -1) == 195 && rule.value("minor", -1) == 3);
  EXPECT_TRUE(allowed);
}

TEST(OciBundle, RuncRunsAndKeepsTheContainerUnderTheTasksOwnStateFolder) {
  RuncPaths paths{.state_root = "/t/.shoal-oci/state", .log = "/t/.shoal-oci/runc.log", .bundle = "/t/.shoal-oci/0",
                  .id = "task-0", .pid_file = "/t/.shoal-oci/0/pid"};
  EXPECT_EQ(RuncRunArgv(paths),
            (std::vector<std::string>{"runc", "--root", "/t/.shoal-oci/state", "--log", "/t/.shoal-oci/runc.log", "run",
                                      "--keep", "--bundle", "/t/.shoal-oci/0", "--pid-file", "/t/.shoal-oci/0/pid",
                                      "task-0"}));
  EXPECT_EQ(RuncDeleteArgv(paths), (std::vector<std::string>{"runc", "--root", "/t/.shoal-oci/state", "--log",
                                                             "/t/.shoal-oci/runc.log", "delete", "--force", "task-0"}));
}

TEST(OciBundle, ContainersAreNamedAfterTheirTasksGroupSoTheServerFindsWhatTheyLeft) {
  std::string task = "/sys/fs/cgroup/memory/batch/shoal-0931fad4/job-7.2/worker-3";
  EXPECT_EQ(ContainerId(task, "/jobs/job-7/attempt-2/worker-3", 1), "shoal-0931fad4.job-7.2.worker-3.1");
  EXPECT_TRUE(ContainerId(task, "", 1).starts_with(ContainerGroupPrefix("/sys/fs/cgroup/memory/batch/shoal-0931fad4/job-7.2")));
  EXPECT_EQ(ContainerGroupPrefix("/sys/fs/cgroup/memory/batch/shoal-0931fad4/job-7.2"), "shoal-0931fad4.job-7.2.");
  // Outside Shoal's groups: a hash of the task directory, distinct per task.
  std::string a = ContainerId("", "/jobs/job-1/attempt-1/worker-0", 0);
  std::string b = ContainerId("", "/other-home/jobs/job-1/attempt-1/worker-0", 0);
  EXPECT_TRUE(a.starts_with("shoal-task-")) << a;
  EXPECT_NE(a, b);
  EXPECT_EQ(a, ContainerId("/sys/fs/cgroup/memory/user.slice", "/jobs/job-1/attempt-1/worker-0", 0));
}

TEST(OciBundle, GpuDevicesAreTheNodesThatExist) {
  if (geteuid() != 0) GTEST_SKIP() << "making device nodes needs root";
  testing_support::ScratchDirectory folder("dev");
  const std::string& dev = folder.path();
  ASSERT_EQ(mknod((dev + "/nvidia1").c_str(), S_IFCHR | 0600, makedev(195, 1)), 0);
  ASSERT_EQ(mknod((dev + "/nvidiactl").c_str(), S_IFCHR | 0600, makedev(195, 255)), 0);
  auto devices = GpuDevices({0, 1}, dev);  // no nvidia0 here
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].path, "/dev/nvidiactl");
  EXPECT_EQ(devices[0].minor, 255);
  EXPECT_EQ(devices[1].path, "/dev/nvidia1");
  EXPECT_EQ(devices[1].major, 195);
  EXPECT_TRUE(GpuDevices({0}, "/nonexistent").empty());
}

}  // namespace
}  // namespace shoal
