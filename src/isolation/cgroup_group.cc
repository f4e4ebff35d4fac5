#include "isolation/cgroup_group.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <iterator>
#include <optional>
#include <set>
#include <sstream>

#include "common/files.h"

namespace shoal {
namespace {

// The v1 controllers Shoal reads or writes; other co-mounted names (rw, name=systemd) are options.
const std::set<std::string> kKnownControllers = {"memory", "cpu", "cpuacct", "pids", "freezer"};

std::vector<std::string> Split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, separator)) parts.push_back(part);
  return parts;
}

// mountinfo escapes space, tab, newline and backslash as octal (\040).
std::string Unescape(const std::string& field) {
  std::string out;
  for (size_t i = 0; i < field.size(); ++i) {
    auto octal = [&](size_t at) { return at < field.size() && field[at] >= '0' && field[at] <= '7'; };
    if (field[i] == '\\' && octal(i + 1) && octal(i + 2) && octal(i + 3)) {
      out += static_cast<char>(((field[i + 1] - '0') << 6) | ((field[i + 2] - '0') << 3) | (field[i + 3] - '0'));
      i += 3;
    } else {
      out += field[i];
    }
  }
  return out;
}

struct Mount {
  std::string root;        // the part of the hierarchy this mount shows
  std::string mountpoint;
  std::vector<std::string> controllers;  // v1 only
};

// The directory of `path` (a group's path in its hierarchy) under `mount`; "" if the mount does not show it.
std::string DirectoryOf(const Mount& mount, const std::string& path, const std::string& root) {
  std::string relative;
  if (mount.root == "/") {
    relative = path;
  } else if (path == mount.root || path.starts_with(mount.root + "/")) {
    relative = path.substr(mount.root.size());
  } else {
    return "";
  }
  if (relative == "/") relative.clear();
  return root + mount.mountpoint + relative;
}

bool HasControllers(const std::string& dir) {
  auto listed = ReadFile(dir + "/cgroup.controllers");
  if (!listed.ok()) return false;
  std::istringstream words(*listed);
  std::set<std::string> enabled{std::istream_iterator<std::string>(words), std::istream_iterator<std::string>()};
  return std::all_of(std::begin(kLimitedControllers), std::end(kLimitedControllers),
                     [&](const char* c) { return enabled.count(c) > 0; });
}

}  // namespace

std::vector<std::string> CgroupGroup::Directories() const {
  std::vector<std::string> out;
  for (const auto& [controller, dir] : dirs) {
    if (std::find(out.begin(), out.end(), dir) == out.end()) out.push_back(dir);
  }
  return out;
}

std::string CgroupGroup::Dir(const std::string& controller) const {
  auto it = dirs.find(controller);
  return it == dirs.end() ? "" : it->second;
}

CgroupGroup CgroupGroup::Child(const std::string& name) const {
  CgroupGroup child = *this;
  for (auto& [controller, dir] : child.dirs) dir += "/" + name;
  return child;
}

std::string CgroupGroup::Encode() const {
  std::string text = "v" + std::to_string(version) + ":";
  bool first = true;
  for (const auto& [controller, dir] : dirs) {
    text += (first ? "" : ";") + controller + "=" + dir;
    first = false;
  }
  return text;
}

Result<CgroupGroup> CgroupGroup::Decode(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument("cgroup '" + text + "': " + why + "; expected v1:memory=/dir;pids=/dir or v2:memory=/dir");
  };
  if (text.size() < 3 || text[0] != 'v' || (text[1] != '1' && text[1] != '2') || text[2] != ':') {
    return bad("no version");
  }
  CgroupGroup group;
  group.version = text[1] - '0';
  for (const std::string& entry : Split(text.substr(3), ';')) {
    size_t equals = entry.find('=');
    if (equals == std::string::npos || equals == 0 || entry.size() <= equals + 1 || entry[equals + 1] != '/') {
      return bad("'" + entry + "' is not controller=/absolute/dir");
    }
    group.dirs[entry.substr(0, equals)] = entry.substr(equals + 1);
  }
  if (group.dirs.count("memory") == 0) return bad("no memory directory");
  return group;
}

std::string CgroupGroup::Describe() const {
  if (empty()) return "no cgroup";
  std::string controllers;
  for (const auto& [controller, dir] : dirs) controllers += (controllers.empty() ? "" : ", ") + controller;
  std::string where;
  for (const std::string& dir : Directories()) where += (where.empty() ? "" : ", ") + dir;
  return "cgroup v" + std::to_string(version) + " (" + controllers + ") at " + where;
}

namespace {

struct Mounts {
  std::vector<Mount> v1;
  std::optional<Mount> unified;
};

// The cgroup mounts of mountinfo; v1 ones list the controllers `wanted` accepts.
Mounts ParseMounts(const std::string& mountinfo, const std::function<bool(const std::string&)>& wanted) {
  Mounts mounts;
  for (const std::string& line : Split(mountinfo, '\n')) {
    std::vector<std::string> fields = Split(line, ' ');
    auto dash = std::find(fields.begin(), fields.end(), "-");
    // After the separator: the type, the source and the super options; a line without all three is skipped.
    if (fields.size() < 5 || dash == fields.end() || fields.end() - dash < 4) continue;
    Mount mount{Unescape(fields[3]), Unescape(fields[4]), {}};
    const std::string& type = *(dash + 1);
    if (type == "cgroup2") {
      mounts.unified = mount;
    } else if (type == "cgroup") {
      for (const std::string& option : Split(*(dash + 3), ',')) {
        if (wanted(option)) mount.controllers.push_back(option);
      }
      if (!mount.controllers.empty()) mounts.v1.push_back(mount);
    }
  }
  return mounts;
}

// Each line of /proc/self/cgroup: hierarchy-id:controllers:path ("0::/path" is the unified
// one): controller (or "" for unified) -> path.
std::map<std::string, std::string> ParsePaths(const std::string& proc_cgroup) {
  std::map<std::string, std::string> paths;
  for (const std::string& line : Split(proc_cgroup, '\n')) {
    size_t first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    std::string path = line.substr(second + 1);
    std::string controllers = line.substr(first + 1, second - first - 1);
    if (controllers.empty()) paths[""] = path;
    for (const std::string& c : Split(controllers, ',')) paths[c] = path;
  }
  return paths;
}

}  // namespace

std::vector<std::string> OwnHierarchyDirectories(const std::string& mountinfo, const std::string& proc_cgroup,
                                                 const std::string& root) {
  // A v1 mount's options name its controllers, or its name (name=systemd) for one without.
  Mounts mounts = ParseMounts(mountinfo, [](const std::string& option) {
    return option.starts_with("name=") ||
           (!option.empty() && option != "rw" && option != "ro" &&
            std::all_of(option.begin(), option.end(), [](char c) { return std::islower(static_cast<unsigned char>(c)) || c == '_'; }));
  });
  std::map<std::string, std::string> paths = ParsePaths(proc_cgroup);
  std::vector<std::string> dirs;
  auto add = [&](const std::string& dir) {
    if (!dir.empty() && std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) dirs.push_back(dir);
  };
  for (const Mount& mount : mounts.v1) {
    for (const std::string& controller : mount.controllers) {
      if (!paths.count(controller)) continue;
      add(DirectoryOf(mount, paths[controller], root));
      break;  // co-mounted controllers share the directory
    }
  }
  if (mounts.unified && paths.count("")) add(DirectoryOf(*mounts.unified, paths[""], root));
  return dirs;
}

Result<CgroupGroup> FindCgroups(const std::string& mountinfo, const std::string& proc_cgroup, const std::string& root) {
  Mounts mounts = ParseMounts(mountinfo, [](const std::string& option) { return kKnownControllers.count(option) > 0; });
  std::vector<Mount>& v1 = mounts.v1;
  std::optional<Mount>& unified = mounts.unified;
  std::map<std::string, std::string> paths = ParsePaths(proc_cgroup);

  if (unified && paths.count("")) {
    std::string dir = DirectoryOf(*unified, paths[""], root);
    if (!dir.empty() && HasControllers(dir)) {
      CgroupGroup group{2, {}};
      for (const char* controller : kLimitedControllers) group.dirs[controller] = dir;
      return group;
    }
  }
  CgroupGroup group{1, {}};
  for (const Mount& mount : v1) {
    for (const std::string& controller : mount.controllers) {
      if (!paths.count(controller)) continue;
      std::string dir = DirectoryOf(mount, paths[controller], root);
      if (!dir.empty()) group.dirs[controller] = dir;
    }
  }
  std::string missing;
  for (const char* controller : kLimitedControllers) {
    if (group.dirs.count(controller) == 0) missing += (missing.empty() ? "" : ", ") + std::string(controller);
  }
  if (!missing.empty()) {
    return FailedPrecondition(
        "no cgroup controllers for " + missing + ": neither a unified (v2) hierarchy with them enabled nor v1 " +
        "hierarchies of them are mounted where this process can use them");
  }
  return group;
}

Result<CgroupGroup> FindOwnCgroups() {
  auto mountinfo = ReadFile("/proc/self/mountinfo");
  if (!mountinfo.ok()) return mountinfo.status();
  auto cgroup = ReadFile("/proc/self/cgroup");
  if (!cgroup.ok()) return cgroup.status();
  return FindCgroups(*mountinfo, *cgroup);
}

}  // namespace shoal
