#include "spec/shipping.h"

#include <sys/stat.h>

#include <fstream>

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

std::vector<SpecIssue> CheckShippedFiles(const JobSpec& spec) {
  std::vector<SpecIssue> issues;
  auto readable_file = [](const std::string& path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && std::ifstream(path).good();
  };
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
    } else if (DetectArchiveFormat(path) == ArchiveFormat::kUnknown) {
      issues.push_back({field, "'" + path + "' is not an archive", "ship a .tar.gz, .tgz, .tar or .zip file"});
    }
  }
  return issues;
}

}  // namespace shoal
