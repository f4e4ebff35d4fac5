// ImageStore: turns the image names of a job's spec into root file systems its tasks can
// run in (docs/isolation.md, "Images"). Images live in the server's podman storage (users
// bring them with `podman pull`, `podman load` or `podman import`); each image id is
// extracted once, at the first submit that names it, into <cache>/<id>/rootfs, which every
// later job of that image shares read-only.
//
// Contract:
//  - Resolve(spec) fills every ImageSpec of the spec (the job's and the roles') with the
//    image's id and its root, or refuses with InvalidArgument naming the field, the image
//    and the fix: an image podman does not have, an image without /bin/sh (Shoal starts
//    the command with it), no runc on this machine. Nothing is started on refusal.
//  - An extraction happens in a folder of its own and is renamed into place when whole, so
//    a crash leaves no half root that a later job would use; concurrent resolves of one
//    image extract it once.
//  - The cache folders are 0755: every job's account reads the roots, none may write them.
//  - Mount points: a container's runtime cannot make a folder in a read-only root it does
//    not own (a job running as its owner's account), so the server makes them: /etc/hosts
//    and /etc/resolv.conf at extraction, and at each submit the jobs folder (the cache's
//    parent; its tasks' folders are mounted on a tmpfs there, isolation/oci_bundle.h) and
//    the job's workdir, as empty folders. A path through a link of the image is not made
//    (MakeFoldersInRoot): nothing is ever made outside the root.
//  - A name is looked up with `podman image inspect` (about 0.1 s) only when podman's
//    storage changed since it was last looked up: podman rewrites one file whenever an
//    image is added, removed or tagged, and while its modification time and size stay,
//    a name resolves to the same id. runc is looked for once, until it is found.
//  - The podman and runc programs are options, so tests run fakes.
// Thread-safety: Resolve may be called from any thread.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "common/process.h"
#include "common/status.h"
#include "spec/job_spec.h"

namespace shoal {

struct ImageStoreOptions {
  std::string cache_dir;  // absolute; the job accounts must be able to pass through its parents
  std::string podman = "podman";
  std::string runc = "runc";
  int timeout_ms = 300'000;  // one podman command, an extraction included
};

class ImageStore {
 public:
  ImageStore(ImageStoreOptions options, ProcessLauncher& processes);
  Status Resolve(JobSpec& spec);
  const std::string& cache_dir() const { return options_.cache_dir; }

 private:
  Result<ImageSpec> ResolveOne(const std::string& field, const std::string& name, const std::string& workdir);
  Result<std::string> LookUp(const std::string& field, const std::string& name);
  Status Extract(const std::string& name, const std::string& id, const std::string& folder);
  // The modification time and size of podman's image list, when it can be found.
  std::optional<std::pair<int64_t, int64_t>> StorageStamp();

  struct KnownId {
    std::string id;
    std::pair<int64_t, int64_t> stamp;
  };
  ImageStoreOptions options_;
  ProcessLauncher& processes_;
  std::mutex mutex_;  // one resolve at a time
  bool runc_found_ = false;
  std::optional<std::string> images_file_;  // podman's image list; "" when it cannot be found
  std::map<std::string, KnownId> known_;    // name -> id, as of a stamp
};

// Makes the folders of `path` (absolute, as the container sees it) inside `rootfs` that
// are missing, without following any link: a component that is a link or not a folder
// stops it (false), as does a failure to make one.
bool MakeFoldersInRoot(const std::string& rootfs, const std::string& path);
// The deepest folder of `path` (absolute) that exists in `rootfs` as a folder, reached
// without following links ("/" at least).
std::string DeepestFolderInRoot(const std::string& rootfs, const std::string& path);

// Whether `path` (absolute, as the container sees it) names an executable file inside the
// root `rootfs`, following symbolic links as the container would: absolute targets are
// read inside the root, never on the host.
bool ExecutableInRoot(const std::string& rootfs, const std::string& path);

}  // namespace shoal
