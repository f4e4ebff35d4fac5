#include "container/localizer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "common/files.h"
#include "spec/shipping.h"

namespace shoal {
namespace {

Status Unpack(const std::string& archive, const std::string& into, ProcessLauncher& processes,
              const std::map<std::string, std::string>& env) {
  ArchiveFormat format = DetectArchiveFormat(archive);
  if (format != ArchiveFormat::kUnknown) {
    // Checked at submit too; checked again here because the file may have changed since.
    ASSIGN_OR_RETURN(std::vector<ArchiveMember> members, ListArchive(archive, format, processes));
    if (std::string unsafe = UnsafeMembers(members); !unsafe.empty()) {
      return InvalidArgument("'" + archive + "' " + unsafe + "; an archive may hold only files and folders, so it is not unpacked");
    }
  }
  std::vector<std::string> argv;
  switch (format) {
    case ArchiveFormat::kGzip:
    case ArchiveFormat::kTar: argv = {"tar", "-xf", archive, "-C", into}; break;
    case ArchiveFormat::kZip: argv = {"unzip", "-q", "-o", archive, "-d", into}; break;
    case ArchiveFormat::kUnknown:
      return InvalidArgument("'" + archive + "' is not an archive (.tar.gz, .tgz, .tar or .zip)");
  }
  std::string log = into + ".unpack.log";
  int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  auto pid = processes.Spawn({.argv = argv, .env = env, .stdout_fd = fd, .stderr_fd = fd});
  if (fd >= 0) close(fd);
  if (!pid.ok()) return pid.status().WithContext("cannot unpack '" + archive + "'");
  ExitInfo exit = processes.Wait(*pid);
  if (!exit.success()) {
    auto detail = ReadFile(log);
    return Unavailable("cannot unpack '" + archive + "': " + argv[0] + " " + exit.Describe() +
                       (detail.ok() && !detail->empty() ? ": " + detail->substr(0, 300) : ""));
  }
  // And what it did unpack is looked at: an archive swapped between the listing and tar
  // must not leave a link, a device or a FIFO behind.
  if (std::string found = FirstUnsafeEntry(into); !found.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(into, ec);
    return InvalidArgument("'" + archive + "' unpacked " + found + ", which an archive may not hold; the folder was removed");
  }
  return Status::Ok();
}

}  // namespace

std::string FirstUnsafeEntry(const std::string& folder) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    struct stat st;
    if (::lstat(it->path().c_str(), &st) != 0) continue;
    std::string relative = it->path().lexically_relative(folder).string();
    if (S_ISLNK(st.st_mode)) return "the symbolic link '" + relative + "'";
    if (S_ISREG(st.st_mode) && st.st_nlink > 1) return "the hard link '" + relative + "'";
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) return "the special file '" + relative + "'";
  }
  return "";
}

Status Localize(const std::vector<std::string>& files, const std::vector<ArchiveSpec>& archives,
                const std::string& task_dir, ProcessLauncher& processes, std::map<std::string, std::string>& env) {
  namespace fs = std::filesystem;
  for (const std::string& from : files) {
    std::error_code ec;
    fs::copy_file(from, fs::path(task_dir) / fs::path(from).filename(), fs::copy_options::overwrite_existing, ec);
    if (ec) return Unavailable("cannot ship '" + from + "' to the task: " + ec.message());
  }
  std::map<std::string, std::vector<std::string>> prepends;
  for (const ArchiveSpec& archive : archives) {
    std::string into = task_dir + "/" + archive.name;
    RETURN_IF_ERROR(MakeDirectories(into));
    RETURN_IF_ERROR(Unpack(archive.path, into, processes, env));
    for (const auto& [var, paths] : archive.prepend) {
      for (const std::string& path : paths) prepends[var].push_back(fs::path(into + "/" + path).lexically_normal().string());
    }
  }
  for (const auto& [var, paths] : prepends) {
    std::string value;
    for (const auto& path : paths) value += (value.empty() ? "" : ":") + path;
    auto current = env.find(var);
    if (current != env.end() && !current->second.empty()) value += ":" + current->second;
    env[var] = value;
  }
  return Status::Ok();
}

}  // namespace shoal
