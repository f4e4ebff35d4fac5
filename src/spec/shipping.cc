#include "spec/shipping.h"

#include <sys/stat.h>

#include <fstream>

#include "common/process.h"

namespace shoal {

ArchiveFormat DetectArchiveFormat(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[512] = {};
  in.read(head, sizeof head);
  std::streamsize n = in.gcount();
  if (n >= 2 && static_cast<unsigned char>(head[0]) == 0x1f && static_cast<unsigned char>(head[1]) == 0x8b) {
    return ArchiveFormat::kGzip;
  }
  if (n >= 4 && head[0] == 'P' && head[1] == 'K' && head[2] == 3 && head[3] == 4) return ArchiveFormat::kZip;
  if (n >= 262 && std::string(head + 257, 5) == "ustar") return ArchiveFormat::kTar;
  return ArchiveFormat::kUnknown;
}

bool EscapesFolder(const std::string& member) {
  if (member.starts_with("/")) return true;
  size_t start = 0;
  while (start <= member.size()) {
    size_t end = member.find('/', start);
    if (end == std::string::npos) end = member.size();
    if (member.compare(start, end - start, "..") == 0 && end - start == 2) return true;
    start = end + 1;
  }
  return false;
}

Result<std::vector<std::string>> ArchiveMembers(const std::string& path, ArchiveFormat format) {
  std::vector<std::string> argv = format == ArchiveFormat::kZip ? std::vector<std::string>{"unzip", "-Z1", path}
                                                                : std::vector<std::string>{"tar", "-tf", path};
  ASSIGN_OR_RETURN(CapturedOutput out, RunAndCapture(RealProcessLauncher::Instance(), argv, 30'000));
  if (!out.exit.success() || out.timed_out) {
    return InvalidArgument("cannot list '" + path + "' with " + argv[0] + ": " + out.text.substr(0, 300));
  }
  std::vector<std::string> members;
  size_t start = 0;
  while (start < out.text.size()) {
    size_t end = out.text.find('\n', start);
    if (end == std::string::npos) end = out.text.size();
    if (end > start) members.push_back(out.text.substr(start, end - start));
    start = end + 1;
  }
  return members;
}

std::vector<SpecIssue> CheckShippedFiles(const JobSpec& spec) {
  std::vector<SpecIssue> issues;
  auto readable_file = [](const std::string& path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && std::ifstream(path).good();
  };
  struct stat workdir;
  if (!spec.workdir.empty() && (stat(spec.workdir.c_str(), &workdir) != 0 || !S_ISDIR(workdir.st_mode))) {
    issues.push_back({"workdir", "'" + spec.workdir + "' is not a folder", "create it, or point workdir at the folder the tasks start in"});
  }
  for (size_t i = 0; i < spec.files.size(); ++i) {
    if (!readable_file(spec.files[i])) {
      issues.push_back({"files[" + std::to_string(i) + "]", "'" + spec.files[i] + "' is not a readable file",
                        "check the path (relative paths start from the spec's folder)"});
    }
  }
  for (size_t i = 0; i < spec.archives.size(); ++i) {
    const std::string& path = spec.archives[i].path;
    std::string field = "archives[" + std::to_string(i) + "].path";
    if (!readable_file(path)) {
      issues.push_back({field, "'" + path + "' is not a readable file", "check the path (relative paths start from the spec's folder)"});
    } else if (ArchiveFormat format = DetectArchiveFormat(path); format == ArchiveFormat::kUnknown) {
      issues.push_back({field, "'" + path + "' is not an archive", "ship a .tar.gz, .tgz, .tar or .zip file"});
    } else if (auto members = ArchiveMembers(path, format); !members.ok()) {
      issues.push_back({field, members.status().message(), "ship an archive that tar or unzip can read"});
    } else {
      for (const std::string& member : *members) {
        if (!EscapesFolder(member)) continue;
        issues.push_back({field, "'" + path + "' holds '" + member + "', which would unpack outside the task's folder",
                          "build the archive from inside its folder, with relative paths and no '..'"});
        break;
      }
    }
  }
  return issues;
}

}  // namespace shoal
