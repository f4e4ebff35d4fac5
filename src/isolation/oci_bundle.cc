#include "isolation/oci_bundle.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstdio>

namespace shoal {
namespace {

Json Mount(const std::string& destination, const std::string& type, const std::string& source,
           std::vector<std::string> options) {
  return {{"destination", destination}, {"type", type}, {"source", source}, {"options", std::move(options)}};
}

Json Bind(const std::string& path, bool writable) {
  return Mount(path, "bind", path, {"rbind", writable ? "rw" : "ro", "nosuid"});
}

// The last `n` components of a path, or {} when it has fewer.
std::vector<std::string> LastComponents(const std::string& path, size_t n) {
  std::vector<std::string> parts;
  size_t end = path.size();
  while (parts.size() < n && end > 0) {
    size_t slash = path.rfind('/', end - 1);
    size_t start = slash == std::string::npos ? 0 : slash + 1;
    if (end > start) parts.insert(parts.begin(), path.substr(start, end - start));
    if (slash == std::string::npos) break;
    end = slash;
  }
  return parts.size() == n ? parts : std::vector<std::string>{};
}

}  // namespace

std::string ContainerId(const std::string& task_memory_dir, const std::string& task_dir, size_t local) {
  std::vector<std::string> parts = LastComponents(task_memory_dir, 3);
  if (!parts.empty() && parts[0].starts_with("shoal-")) {
    return parts[0] + "." + parts[1] + "." + parts[2] + "." + std::to_string(local);
  }
  uint64_t hash = 14695981039346656037ull;  // FNV-1a
  for (unsigned char c : task_dir) hash = (hash ^ c) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(hash));
  return std::string("shoal-task-") + hex + "." + std::to_string(local);
}

std::string ContainerGroupPrefix(const std::string& attempt_memory_dir) {
  std::vector<std::string> parts = LastComponents(attempt_memory_dir, 2);
  return parts.empty() ? "" : parts[0] + "." + parts[1] + ".";
}

Json OciConfig(const OciBundleSpec& spec) {
  Json env = Json::array();
  for (const auto& [key, value] : spec.env) env.push_back(key + "=" + value);
  Json mounts = Json::array();
  mounts.push_back(Mount("/proc", "bind", "/proc", {"rbind", "nosuid", "nodev", "noexec"}));
  mounts.push_back(Mount("/dev", "tmpfs", "tmpfs", {"nosuid", "strictatime", "mode=755", "size=65536k"}));
  mounts.push_back(Mount("/dev/pts", "devpts", "devpts",
                         {"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"}));
  mounts.push_back(Mount("/dev/shm", "bind", "/dev/shm", {"rbind", "rw", "nosuid", "nodev"}));
  mounts.push_back(Mount("/sys", "bind", "/sys", {"rbind", "ro", "nosuid", "noexec", "nodev"}));
  mounts.push_back(Mount("/tmp", "tmpfs", "tmpfs", {"nosuid", "nodev", "mode=1777"}));
  mounts.push_back(Bind("/etc/hosts", false));
  mounts.push_back(Bind("/etc/resolv.conf", false));
  for (const std::string& path : spec.scratch) mounts.push_back(Mount(path, "tmpfs", "tmpfs", {"nosuid", "nodev", "mode=755"}));
  for (const std::string& path : spec.binds) mounts.push_back(Bind(path, true));
  Json device_rules = Json::array({{{"allow", false}, {"access", "rwm"}}});
  for (const OciDevice& device : spec.devices) {
    mounts.push_back(Mount(device.path, "bind", device.path, {"rbind", "rw", "nosuid"}));
    device_rules.push_back({{"allow", true},
                            {"type", std::string(1, device.type)},
                            {"major", device.major},
                            {"minor", device.minor},
                            {"access", "rwm"}});
  }
  // runc's own default nodes (null, zero, full, random, urandom, tty) stay usable.
  for (auto [major, minor] : std::vector<std::pair<int, int>>{{1, 3}, {1, 5}, {1, 7}, {1, 8}, {1, 9}, {5, 0}, {5, 2}}) {
    device_rules.push_back({{"allow", true}, {"type", "c"}, {"major", major}, {"minor", minor}, {"access", "rwm"}});
  }
  device_rules.push_back({{"allow", true}, {"type", "c"}, {"major", 136}, {"access", "rwm"}});  // /dev/pts/*
  Json one_id_uid = Json::array({{{"containerID", 0}, {"hostID", spec.host_uid}, {"size", 1}}});
  Json one_id_gid = Json::array({{{"containerID", 0}, {"hostID", spec.host_gid}, {"size", 1}}});
  return {{"ociVersion", "1.0.2"},
          {"process",
           {{"terminal", false},
            {"user", {{"uid", 0}, {"gid", 0}}},
            {"args", spec.args},
            {"env", env},
            {"cwd", spec.cwd},
            {"noNewPrivileges", true}}},
          {"root", {{"path", spec.rootfs}, {"readonly", true}}},
          {"mounts", mounts},
          {"linux",
           {{"namespaces", Json::array({{{"type", "user"}}, {{"type", "mount"}}})},
            {"uidMappings", one_id_uid},
            {"gidMappings", one_id_gid},
            {"resources", {{"devices", device_rules}}},
            {"maskedPaths",
             {"/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list",
              "/proc/sched_debug", "/proc/scsi", "/sys/firmware"}},
            {"readonlyPaths", {"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}}}}};
}

std::vector<std::string> RuncRunArgv(const RuncPaths& paths) {
  return {paths.runc, "--root", paths.state_root, "--log", paths.log, "run", "--keep",
          "--bundle", paths.bundle, "--pid-file", paths.pid_file, paths.id};
}

std::vector<std::string> RuncDeleteArgv(const RuncPaths& paths) {
  return {paths.runc, "--root", paths.state_root, "--log", paths.log, "delete", "--force", paths.id};
}

std::vector<OciDevice> GpuDevices(const std::vector<int>& gpus, const std::string& dev) {
  std::vector<std::string> names = {"nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset"};
  for (int gpu : gpus) names.push_back("nvidia" + std::to_string(gpu));
  std::vector<OciDevice> devices;
  for (const std::string& name : names) {
    std::string path = dev + "/" + name;
    struct stat st {};
    if (stat(path.c_str(), &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))) continue;
    devices.push_back({"/dev/" + name, S_ISCHR(st.st_mode) ? 'c' : 'b', static_cast<int64_t>(major(st.st_rdev)),
                       static_cast<int64_t>(minor(st.st_rdev))});
  }
  return devices;
}

}  // namespace shoal
