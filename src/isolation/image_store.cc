#include "isolation/image_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/files.h"
#include "common/shell_quote.h"

namespace shoal {
namespace {

const char* kBringImages =
    "bring it into this server's podman storage first: `podman pull NAME` from a registry, "
    "`podman load -i FILE.tar` or `podman import ROOTFS.tar NAME` (docs/isolation.md, \"Images\")";

std::string FirstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line.size() > 300 ? line.substr(0, 300) + "..." : line;
}

bool IsHexId(const std::string& id) {
  return id.size() >= 12 && id.size() <= 128 && id.find_first_not_of("0123456789abcdef") == std::string::npos;
}

std::vector<std::string> Components(const std::string& path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    std::string part = path.substr(start, slash - start);
    if (!part.empty() && part != ".") parts.push_back(part);
    start = slash + 1;
  }
  return parts;
}

}  // namespace


std::string DeepestFolderInRoot(const std::string& rootfs, const std::string& path) {
  std::string reached;
  for (const std::string& part : Components(path)) {
    if (part == "..") break;
    struct stat st {};
    if (lstat((rootfs + reached + "/" + part).c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) break;
    reached += "/" + part;
  }
  return reached.empty() ? "/" : reached;
}

bool MakeFoldersInRoot(const std::string& rootfs, const std::string& path) {
  std::string reached;
  for (const std::string& part : Components(path)) {
    if (part == "..") return false;
    reached += "/" + part;
    std::string here = rootfs + reached;
    struct stat st {};
    if (lstat(here.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) return false;  // a link (never followed) or a file
      continue;
    }
    if (mkdir(here.c_str(), 0755) != 0 && errno != EEXIST) return false;
  }
  return true;
}


bool ExecutableInRoot(const std::string& rootfs, const std::string& path) {
  // Walk the path one component at a time, reading links inside the root.
  std::vector<std::string> pending;
  auto push_components = [&pending](const std::string& p) {
    std::vector<std::string> parts = Components(p);
    pending.insert(pending.begin(), parts.begin(), parts.end());
  };
  push_components(path);
  std::string resolved;  // inside the root, "" is the root itself
  for (int links = 0; !pending.empty();) {
    std::string part = pending.front();
    pending.erase(pending.begin());
    if (part == ".") continue;
    if (part == "..") {
      resolved = resolved.substr(0, resolved.rfind('/') == std::string::npos ? 0 : resolved.rfind('/'));
      continue;
    }
    std::string candidate = resolved + "/" + part;
    struct stat st {};
    if (lstat((rootfs + candidate).c_str(), &st) != 0) return false;
    if (S_ISLNK(st.st_mode)) {
      if (++links > 40) return false;
      char target[4096];
      ssize_t n = readlink((rootfs + candidate).c_str(), target, sizeof(target) - 1);
      if (n <= 0) return false;
      std::string link(target, static_cast<size_t>(n));
      if (link.starts_with("/")) resolved.clear();
      push_components(link);
      continue;
    }
    resolved = candidate;
    if (pending.empty()) return S_ISREG(st.st_mode) && (st.st_mode & 0111) != 0;
    if (!S_ISDIR(st.st_mode)) return false;
  }
  return false;
}

ImageStore::ImageStore(ImageStoreOptions options, ProcessLauncher& processes)
    : options_(std::move(options)), processes_(processes) {}

Status ImageStore::Resolve(JobSpec& spec) {
  if (!spec.image && std::none_of(spec.roles.begin(), spec.roles.end(), [](const RoleSpec& r) { return r.image; })) {
    return Status::Ok();
  }
  std::lock_guard lock(mutex_);
  if (!runc_found_) {
    // runc runs the containers; without it no task of this job could start.
    auto runc = RunAndCapture(processes_, {options_.runc, "--version"}, 10'000);
    if (!runc.ok() || !runc->exit.success()) {
      return InvalidArgument("image: running tasks in images needs runc on this machine (" +
                             (runc.ok() ? FirstLine(runc->text) : runc.status().message()) +
                             "); fix: install it (`apt-get install runc`), or drop `image:` to run on the host");
    }
    runc_found_ = true;
  }
  auto resolve = [&](std::optional<ImageSpec>& image, const std::string& field) -> Status {
    if (!image) return Status::Ok();
    ASSIGN_OR_RETURN(ImageSpec resolved, ResolveOne(field, image->name, spec.workdir));
    image = resolved;
    return Status::Ok();
  };
  RETURN_IF_ERROR(resolve(spec.image, "image"));
  for (RoleSpec& role : spec.roles) RETURN_IF_ERROR(resolve(role.image, "roles." + role.name + ".image"));
  return Status::Ok();
}

std::optional<std::pair<int64_t, int64_t>> ImageStore::StorageStamp() {
  if (!images_file_) {
    auto info = RunAndCapture(processes_,
                              {options_.podman, "info", "--format", "{{.Store.GraphRoot}}/{{.Store.GraphDriverName}}"},
                              options_.timeout_ms);
    std::string where = info.ok() && info->exit.success() ? FirstLine(info->text) : "";
    images_file_ = where.starts_with("/") ? where + "-images/images.json" : "";
  }
  struct stat st {};
  if (images_file_->empty() || stat(images_file_->c_str(), &st) != 0) return std::nullopt;
  return std::make_pair(static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec,
                        static_cast<int64_t>(st.st_size));
}

Result<std::string> ImageStore::LookUp(const std::string& field, const std::string& name) {
  auto stamp = StorageStamp();  // before the look-up: a change during it makes the next one look again
  if (auto known = known_.find(name); stamp && known != known_.end() && known->second.stamp == *stamp) {
    return known->second.id;
  }
  auto inspected = RunAndCapture(processes_, {options_.podman, "image", "inspect", "--format", "{{.Id}}", name},
                                 options_.timeout_ms);
  if (!inspected.ok()) {
    return InvalidArgument(field + ": cannot look up image '" + name + "': " + inspected.status().message() +
                           "; fix: install podman (`apt-get install podman`), where Shoal finds images");
  }
  std::string id = FirstLine(inspected->text);
  if (!inspected->exit.success() || !IsHexId(id)) {
    return InvalidArgument(field + ": image '" + name + "' is not in this server's podman storage (podman: " + id +
                           "); fix: " + kBringImages);
  }
  if (stamp) known_[name] = KnownId{id, *stamp};
  return id;
}

Result<ImageSpec> ImageStore::ResolveOne(const std::string& field, const std::string& name,
                                         const std::string& workdir) {
  ASSIGN_OR_RETURN(std::string id, LookUp(field, name));
  std::string folder = options_.cache_dir + "/" + id;
  if (access((folder + "/rootfs").c_str(), F_OK) != 0) RETURN_IF_ERROR(Extract(name, id, folder));
  std::string rootfs = folder + "/rootfs";
  if (!ExecutableInRoot(rootfs, "/bin/sh")) {
    return InvalidArgument(field + ": image '" + name + "' has no /bin/sh, which Shoal starts each task's command "
                           "with; fix: use an image with a shell (any Debian-based one has /bin/sh)");
  }
  // Where the job's folders are mounted (the header says why); "/" is never mounted.
  for (const std::string& point : {DirName(options_.cache_dir), workdir}) {
    if (!point.empty() && point != "/") (void)MakeFoldersInRoot(rootfs, point);
  }
  return ImageSpec{name, id, rootfs};
}

Status ImageStore::Extract(const std::string& name, const std::string& id, const std::string& folder) {
  static std::atomic<int> counter{0};
  RETURN_IF_ERROR(MakeDirectories(options_.cache_dir));
  chmod(options_.cache_dir.c_str(), 0755);
  std::string scratch = options_.cache_dir + "/.extracting-" + id + "-" + std::to_string(getpid()) + "-" +
                        std::to_string(counter++);
  std::error_code ignored;
  std::filesystem::remove_all(scratch, ignored);
  RETURN_IF_ERROR(MakeDirectories(scratch + "/rootfs"));
  auto fail = [&](const std::string& why) {
    std::filesystem::remove_all(scratch, ignored);
    return Unavailable("cannot extract image '" + name + "' (" + id.substr(0, 12) + ") into " + folder + ": " + why);
  };
  // A container that never runs gives the image's files as one tar stream.
  auto created = RunAndCapture(processes_, {options_.podman, "create", "--quiet", name, "/bin/true"}, options_.timeout_ms);
  if (!created.ok()) return fail(created.status().message());
  std::string container = FirstLine(created->text);
  if (!created->exit.success() || !IsHexId(container)) return fail("podman create: " + container);
  std::string pipeline = ShellQuote(options_.podman) + " export " + ShellQuote(container) + " | tar -x -C " +
                         ShellQuote(scratch + "/rootfs") + " -f -";
  auto exported = RunAndCapture(processes_, {"/bin/bash", "-c", "set -o pipefail; " + pipeline},
                                options_.timeout_ms);
  (void)RunAndCapture(processes_, {options_.podman, "rm", "--force", container}, options_.timeout_ms);
  if (!exported.ok()) return fail(exported.status().message());
  if (!exported->exit.success()) return fail("podman export: " + FirstLine(exported->text));
  // The host's files are mounted over these (host networking): they must exist to be mounted on.
  for (const char* file : {"/etc/hosts", "/etc/resolv.conf"}) {
    struct stat st {};
    std::string path = scratch + "/rootfs" + file;
    if (lstat(path.c_str(), &st) == 0) continue;
    if (!MakeFoldersInRoot(scratch + "/rootfs", "/etc")) continue;
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) close(fd);
  }
  chmod(scratch.c_str(), 0755);
  chmod((scratch + "/rootfs").c_str(), 0755);
  if (rename(scratch.c_str(), folder.c_str()) != 0) {
    int err = errno;
    std::filesystem::remove_all(scratch, ignored);
    // Another server sharing the cache put it there first: theirs is as good.
    if (access((folder + "/rootfs").c_str(), F_OK) == 0) return Status::Ok();
    return Unavailable("cannot move the extracted image into " + folder + ": " + std::strerror(err));
  }
  return Status::Ok();
}

}  // namespace shoal
