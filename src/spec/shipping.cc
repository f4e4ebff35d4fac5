#include "spec/shipping.h"

#include <sys/stat.h>

#include <fstream>
#include <regex>

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

namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// The first n fields of a line (runs of spaces between them) and what follows the one
// space after the last: a listing's path, which may itself hold spaces.
bool SplitFields(const std::string& line, size_t n, std::vector<std::string>* fields, std::string* rest) {
  size_t at = 0;
  for (size_t i = 0; i < n; ++i) {
    at = line.find_first_not_of(' ', at);
    if (at == std::string::npos) return false;
    size_t end = line.find(' ', at);
    if (end == std::string::npos) return false;
    fields->push_back(line.substr(at, end - at));
    at = end;
  }
  *rest = line.substr(at + 1);
  return !rest->empty();
}

std::string KindName(char kind) {
  switch (kind) {
    case 'l': return "the symbolic link";
    case 'h': return "the hard link";
    case 'c': return "the character device";
    case 'b': return "the block device";
    case 'p': return "the FIFO";
    case 's': return "the socket";
    default: return std::string("the member of kind '") + kind + "'";
  }
}

}  // namespace

Result<std::vector<ArchiveMember>> ParseTarListing(const std::string& text) {
  // -rw-r--r-- 0/0    3 2026-12-02 10:27 lib/x.py    (devices show "1,3" as their size)
  std::vector<ArchiveMember> members;
  for (const std::string& line : Lines(text)) {
    if (line.starts_with("tar: ")) continue;  // tar's own messages share the stream
    std::vector<std::string> fields;
    std::string path;
    if (!SplitFields(line, 5, &fields, &path) || fields[0].size() != 10) {
      return InvalidArgument("tar lists a member Shoal cannot read: '" + line.substr(0, 300) + "'");
    }
    members.push_back({path, fields[0][0]});
  }
  return members;
}

Result<std::vector<ArchiveMember>> ParseZipListing(const std::string& text) {
  // -rw-r--r--  3.0 unx     1234 tx defN 24-Jan-01 12:00 lib/x.py
  static const std::regex kVersion(R"(\d+\.\d+)");
  static const std::regex kCount(R"(number of entries: (\d{1,12}))");
  std::vector<ArchiveMember> members;
  long long counted = -1;
  for (const std::string& line : Lines(text)) {
    std::vector<std::string> fields;
    std::string path;
    std::smatch m;
    if (counted < 0 && line.starts_with("Zip file size:") && std::regex_search(line, m, kCount)) {
      counted = std::stoll(m[1]);
    } else if (SplitFields(line, 8, &fields, &path) && std::regex_match(fields[1], kVersion) &&
               fields[3].find_first_not_of("0123456789") == std::string::npos) {
      // A mode without a file type ("?rw-------", as Python's zipfile writes) is unpacked as a file.
      members.push_back({path, fields[0][0] == '?' ? '-' : fields[0][0]});
    }
  }
  if (counted >= 0 && static_cast<long long>(members.size()) != counted) {
    return InvalidArgument("unzip lists " + std::to_string(members.size()) + " members Shoal can read of the " +
                           std::to_string(counted) + " the archive holds");
  }
  return members;
}

Result<std::vector<ArchiveMember>> ListArchive(const std::string& path, ArchiveFormat format, ProcessLauncher& processes) {
  std::vector<std::string> argv = format == ArchiveFormat::kZip
                                      ? std::vector<std::string>{"unzip", "-Z", "-s", path}
                                      : std::vector<std::string>{"tar", "--numeric-owner", "-tvf", path};
  ASSIGN_OR_RETURN(CapturedOutput out, RunAndCapture(processes, argv, 30'000));
  // unzip -Z exits 1 for an empty archive ("Empty zipfile."): no members.
  bool empty_zip = format == ArchiveFormat::kZip && out.text.find("Empty zipfile.") != std::string::npos;
  if ((!out.exit.success() && !empty_zip) || out.timed_out) {
    return InvalidArgument("cannot list '" + path + "' with " + argv[0] + ": " + out.text.substr(0, 300));
  }
  auto members = format == ArchiveFormat::kZip ? ParseZipListing(out.text) : ParseTarListing(out.text);
  if (!members.ok()) return InvalidArgument("cannot list '" + path + "': " + members.status().message());
  return members;
}

std::string UnsafeMembers(const std::vector<ArchiveMember>& members) {
  for (const ArchiveMember& member : members) {
    if (member.kind != '-' && member.kind != 'd') return "holds " + KindName(member.kind) + " '" + member.path + "'";
    if (EscapesFolder(member.path)) return "holds '" + member.path + "', which would unpack outside the task's folder";
  }
  return "";
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
    } else if (auto members = ListArchive(path, format, RealProcessLauncher::Instance()); !members.ok()) {
      issues.push_back({field, members.status().message(), "ship an archive that tar or unzip can read"});
    } else if (std::string unsafe = UnsafeMembers(*members); !unsafe.empty()) {
      issues.push_back({field, "'" + path + "' " + unsafe + "; an archive may hold only files and folders",
                        "build the archive from inside its folder, with relative paths and no '..', and with the "
                        "files links point to instead of the links (tar --dereference --hard-dereference; zip "
                        "without -y); leave devices and FIFOs out"});
    }
  }
  return issues;
}

}  // namespace shoal
