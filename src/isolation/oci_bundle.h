// OciBundle: how one task process runs in an image (docs/isolation.md, "Images"): the
// OCI runtime spec (config.json) the agent writes into the bundle's folder, and the runc
// command lines that run the container and remove it afterwards.
//
// Contract:
//  - The container shares the host's network, PID, IPC and UTS namespaces: ports, the AM,
//    the other tasks, shared memory between ranks, the host name and Shoal's signals reach
//    it as they reach a task without an image. It has its own mount and user namespaces.
//  - Its root is the image's extracted root file system, read-only. /tmp is a tmpfs of its
//    own; the task directory and every other folder in `binds` (the job's working
//    directory) are mounted at their own paths, read-write, on the tmpfs of `scratch` where
//    the root lacks their folders (a runtime may not make them in a root it does not own:
//    isolation/image_store.h makes the parent empty folder); /proc and /dev/shm are the
//    host's, /sys is the host's read-only, /dev holds runc's usual nodes plus the GPU
//    nodes in `devices` (bound, and allowed in the device controller where runc makes
//    one); /etc/hosts and /etc/resolv.conf are the host's, read-only.
//  - User 0 inside is `host_uid`/`host_gid` outside, a mapping of one id: whatever the
//    program writes belongs to the task's account, and it gains no privilege the account
//    lacks (no capabilities, no_new_privileges).
//  - The container runs in the agent's cgroups (a child group runc makes there, or the
//    agent's own where it may not), so the task's limits hold it.
//  - RuncRunArgv keeps the stopped container (--keep): the agent reads the task's cgroups
//    (an OOM kill is counted in runc's child group) before RuncDeleteArgv removes it.
//    The container's pid is written to `pid_file` once it runs (the agent guard reads it).
// Thread-safety: pure functions.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "common/json.h"

namespace shoal {

struct OciDevice {
  std::string path;  // /dev/nvidia0
  char type = 'c';
  int64_t major = 0;
  int64_t minor = 0;
};

struct OciBundleSpec {
  std::string rootfs;                      // absolute: the image's extracted root
  std::vector<std::string> args;           // the process: argv
  std::map<std::string, std::string> env;  // its whole environment
  std::string cwd;                         // absolute, and inside the root or a bind
  uid_t host_uid = 0;
  gid_t host_gid = 0;
  std::vector<std::string> scratch;  // empty folders of the image given a tmpfs of their own, before the binds
  std::vector<std::string> binds;    // host folders mounted at the same path, read-write
  std::vector<OciDevice> devices;  // GPU nodes
};

Json OciConfig(const OciBundleSpec& spec);

struct RuncPaths {
  std::string runc = "runc";
  std::string state_root;  // runc's --root: the task's own, so its state goes with the task directory
  std::string log;         // runc's own messages (not the program's output)
  std::string bundle;      // the folder holding config.json
  std::string id;          // the container's name, unique under state_root
  std::string pid_file;
};

std::vector<std::string> RuncRunArgv(const RuncPaths& paths);
std::vector<std::string> RuncDeleteArgv(const RuncPaths& paths);

// A container's name, unique on the host. As root, runc makes the container's groups in
// the hierarchies Shoal does not manage (devices, blkio, cpuset ...) below its own group
// there, named after the container, and removing a container that has no PID namespace
// kills every process in its groups: two containers must never share a name. A task in a
// group of Shoal's (<...>/shoal-<server>/<job>.<attempt>/<task>, its memory directory)
// names its containers "shoal-<server>.<job>.<attempt>.<task>.<local>", so the server can
// remove what a killed agent left (ContainerGroupPrefix); any other task, by a hash of
// its directory.
std::string ContainerId(const std::string& task_memory_dir, const std::string& task_dir, size_t local);
// "shoal-<server>.<job>.<attempt>.": what the names of an attempt's containers start with,
// from the attempt group's memory directory.
std::string ContainerGroupPrefix(const std::string& attempt_memory_dir);

// The device nodes of the GPUs a task was given (numbers from CUDA_VISIBLE_DEVICES) and
// the driver's shared nodes, those of them that exist under `dev` (the host's /dev).
std::vector<OciDevice> GpuDevices(const std::vector<int>& gpus, const std::string& dev = "/dev");

}  // namespace shoal
