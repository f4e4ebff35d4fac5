#include "storage/local_names.h"

#include <algorithm>

namespace shoal::storage {
namespace {

constexpr size_t kMaxNamePart = 255;  // NAME_MAX of every common Linux file system

std::string Fix(const std::string& uri) {
  return ": a local file cannot have that name; rename the object, or name the input's files with a pattern "
         "that leaves " + uri + " out";
}

}  // namespace

Result<std::string> LocalName(const std::string& uri, const std::string& base) {
  if (!uri.starts_with(base) || uri.size() == base.size()) {
    return InvalidArgument("the object " + uri + " is not inside " + base + Fix(uri));
  }
  std::string name = uri.substr(base.size());
  size_t start = 0;
  for (;;) {
    size_t slash = name.find('/', start);
    std::string part = name.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (part.empty() || part == "." || part == "..") {
      std::string shown = part.empty() ? "an empty part (a doubled or trailing \"/\")" : "a \"" + part + "\" part";
      return InvalidArgument("the object " + uri + " has " + shown + " in its name " + name + Fix(uri));
    }
    if (part.size() > kMaxNamePart) {
      return InvalidArgument("the object " + uri + " has a part of " + std::to_string(part.size()) +
                             " bytes in its name, over the " + std::to_string(kMaxNamePart) + " a file name may have" +
                             Fix(uri));
    }
    if (slash == std::string::npos) return name;
    start = slash + 1;
  }
}

Status CheckLocalNames(const std::vector<ObjectInfo>& objects, const std::string& base) {
  std::vector<std::string> names;
  names.reserve(objects.size());
  std::vector<Status> problems;
  for (const ObjectInfo& object : objects) {
    Result<std::string> name = LocalName(object.uri, base);
    if (name.ok()) {
      names.push_back(std::move(name).value());
    } else {
      problems.push_back(name.status());
    }
  }
  // Sorted, the names inside folder "a/" are together, from the first one not below it.
  std::sort(names.begin(), names.end());
  for (size_t i = 0; i + 1 < names.size(); ++i) {
    std::string folder = names[i] + "/";
    auto inside = std::lower_bound(names.begin() + static_cast<long>(i) + 1, names.end(), folder);
    if (inside != names.end() && inside->starts_with(folder)) {
      problems.push_back(InvalidArgument("the object " + base + names[i] + " would be a file where " + base + *inside +
                                         " needs a folder: a local disk cannot hold both; rename one of them"));
    }
  }
  if (problems.empty()) return Status::Ok();
  if (problems.size() == 1) return problems.front();
  return Status(problems.front().code(), problems.front().message() + " (and " + std::to_string(problems.size() - 1) +
                                             " more whose names a disk cannot hold)");
}

}  // namespace shoal::storage
