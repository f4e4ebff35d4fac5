#include "backend/slurm/role_step.h"

#include <signal.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <sstream>

namespace shoal {
namespace {

bool AllDigits(const std::string& s) {
  return !s.empty() && s.size() <= 9 && s.find_first_not_of("0123456789") == std::string::npos;
}

// "0", "1-3", "0,2-3" (srun's task lists, a node list's bracket); nullopt when malformed
// or when it names more than `limit` numbers. Each number keeps its zero-padded width.
std::optional<std::vector<std::string>> ExpandRanges(const std::string& list, size_t limit) {
  std::vector<std::string> out;
  std::stringstream items(list);
  for (std::string item; std::getline(items, item, ',');) {
    size_t dash = item.find('-');
    std::string low = item.substr(0, dash), high = dash == std::string::npos ? low : item.substr(dash + 1);
    if (!AllDigits(low) || !AllDigits(high)) return std::nullopt;
    long from = std::stol(low), to = std::stol(high);
    if (to < from || out.size() + static_cast<size_t>(to - from) + 1 > limit) return std::nullopt;
    for (long n = from; n <= to; ++n) {
      std::string number = std::to_string(n);
      if (number.size() < low.size()) number.insert(0, low.size() - number.size(), '0');
      out.push_back(number);
    }
  }
  if (out.empty()) return std::nullopt;
  return out;
}

std::optional<ExitInfo> TaskEnd(const std::string& what) {
  constexpr std::string_view kExited = "Exited with exit code ";
  if (what.starts_with(kExited)) {
    std::string code = what.substr(kExited.size());
    if (!AllDigits(code)) return std::nullopt;
    return ExitInfo{std::stoi(code), 0};
  }
  if (what == "Out Of Memory") return ExitInfo{0, SIGKILL};  // the kernel's OOM kill
  for (int sig = 1; sig < 65; ++sig) {
    if (const char* name = strsignal(sig); name && what == name) return ExitInfo{0, sig};
  }
  return ExitInfo{255, 0};  // srun's words for an end Shoal does not know: still an end
}

}  // namespace

Result<std::string> IndexTemplate(const std::vector<std::string>& values) {
  if (values.empty()) return InvalidArgument("no values to share");
  for (const std::string& v : values) {
    if (v.find('%') != std::string::npos) return InvalidArgument("'" + v + "' holds '%'");
  }
  if (std::all_of(values.begin(), values.end(), [&](const std::string& v) { return v == values[0]; })) return values[0];
  // The longest head and tail every value shares, not overlapping in the shortest.
  size_t prefix = values[0].size(), suffix = values[0].size();
  for (const std::string& v : values) {
    size_t p = 0;
    while (p < prefix && p < v.size() && v[p] == values[0][p]) ++p;
    prefix = p;
    size_t s = 0;
    while (s < suffix && s < v.size() && v[v.size() - 1 - s] == values[0][values[0].size() - 1 - s]) ++s;
    suffix = s;
  }
  size_t shortest = values[0].size();
  for (const std::string& v : values) shortest = std::min(shortest, v.size());
  suffix = std::min(suffix, shortest - prefix);
  std::string head = values[0].substr(0, prefix), tail = values[0].substr(values[0].size() - suffix);
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] != head + std::to_string(i) + tail) {
      return InvalidArgument("'" + values[i] + "' differs from the other tasks' by more than its index");
    }
  }
  return head + kIndexPlaceholder + tail;
}

Result<std::vector<std::string>> ShareArgv(const std::vector<ContainerLaunch>& launches) {
  if (launches.empty()) return InvalidArgument("no launches to share");
  for (const ContainerLaunch& launch : launches) {
    if (launch.argv.size() != launches[0].argv.size()) return InvalidArgument("the tasks' command lines differ in length");
  }
  std::vector<std::string> shared;
  for (size_t p = 0; p < launches[0].argv.size(); ++p) {
    std::vector<std::string> values;
    for (const ContainerLaunch& launch : launches) values.push_back(launch.argv[p]);
    ASSIGN_OR_RETURN(std::string value, IndexTemplate(values));
    shared.push_back(std::move(value));
  }
  return shared;
}

Result<std::map<std::string, std::string>> ShareEnv(const std::vector<ContainerLaunch>& launches,
                                                    const std::string& token_variable) {
  if (launches.empty()) return InvalidArgument("no launches to share");
  std::map<std::string, std::string> shared = launches[0].env;
  shared.erase(token_variable);
  std::string tokens;
  for (size_t i = 0; i < launches.size(); ++i) {
    std::map<std::string, std::string> env = launches[i].env;
    auto token = env.find(token_variable);
    if (token == env.end() || token->second.empty() || token->second.find(',') != std::string::npos) {
      return InvalidArgument("task " + std::to_string(i) + " has no token that a list can carry");
    }
    tokens += (i ? "," : "") + token->second;
    env.erase(token);
    if (env != shared) return InvalidArgument("the tasks' environments differ");
  }
  shared[kTaskTokensVariable] = tokens;
  return shared;
}

Result<std::string> ShareLog(const std::vector<ContainerLaunch>& launches) {
  std::vector<std::string> logs;
  for (const ContainerLaunch& launch : launches) logs.push_back(launch.agent_log);
  return IndexTemplate(logs);
}

std::vector<std::pair<int, ExitInfo>> ParseSrunTaskEnds(const std::string& text) {
  constexpr std::string_view kError = "srun: error: ";
  std::vector<std::pair<int, ExitInfo>> ends;
  std::stringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with(kError)) continue;
    std::string rest = line.substr(kError.size());
    size_t node_end = rest.find(": task");
    if (node_end == std::string::npos) continue;
    rest = rest.substr(node_end + 6);  // after ": task"
    if (rest.starts_with("s")) rest = rest.substr(1);
    if (!rest.starts_with(" ")) continue;
    size_t list_end = rest.find(": ");
    if (list_end == std::string::npos) continue;
    auto tasks = ExpandRanges(rest.substr(1, list_end - 1), kMaxStepTasks);
    if (!tasks) continue;
    auto end = TaskEnd(rest.substr(list_end + 2));
    if (!end) continue;
    for (const std::string& task : *tasks) {
      int index = std::stoi(task);
      if (index < kMaxStepTasks) ends.emplace_back(index, *end);
    }
  }
  return ends;
}

Result<std::vector<std::string>> ExpandNodeList(const std::string& list) {
  std::vector<std::string> nodes;
  size_t start = 0;
  while (start <= list.size()) {
    // One item: up to the next comma outside brackets.
    size_t end = start;
    int depth = 0;
    for (; end < list.size() && (depth > 0 || list[end] != ','); ++end) {
      if (list[end] == '[') ++depth;
      if (list[end] == ']' && --depth < 0) return InvalidArgument("Slurm's node list '" + list.substr(0, 80) + "' has an unmatched ']'");
      if (depth > 1) return InvalidArgument("Slurm's node list '" + list.substr(0, 80) + "' nests brackets");
    }
    if (depth != 0) return InvalidArgument("Slurm's node list '" + list.substr(0, 80) + "' has an unmatched '['");
    std::string item = list.substr(start, end - start);
    if (item.empty()) return InvalidArgument("Slurm's node list '" + list.substr(0, 80) + "' has an empty name");
    std::vector<std::string> names{""};
    for (size_t i = 0; i < item.size();) {
      if (item[i] != '[') {
        size_t next = item.find('[', i);
        std::string literal = item.substr(i, next == std::string::npos ? std::string::npos : next - i);
        for (std::string& name : names) name += literal;
        i = next == std::string::npos ? item.size() : next;
        continue;
      }
      size_t close = item.find(']', i);
      size_t room = kMaxStepTasks / names.size();
      auto numbers = ExpandRanges(item.substr(i + 1, close - i - 1), room);
      if (!numbers) {
        return InvalidArgument("Slurm's node list '" + list.substr(0, 80) + "' has a range Shoal cannot read or of more than " +
                               std::to_string(kMaxStepTasks) + " nodes");
      }
      std::vector<std::string> product;
      for (const std::string& name : names) {
        for (const std::string& number : *numbers) product.push_back(name + number);
      }
      names = std::move(product);
      i = close + 1;
    }
    if (nodes.size() + names.size() > static_cast<size_t>(kMaxStepTasks)) {
      return InvalidArgument("Slurm's node list names more than " + std::to_string(kMaxStepTasks) + " nodes");
    }
    nodes.insert(nodes.end(), names.begin(), names.end());
    start = end + 1;
  }
  return nodes;
}

std::string NodeAddresses(const std::map<std::string, std::string>& addresses) {
  std::string text;
  for (const auto& [node, address] : addresses) text += (text.empty() ? "" : ",") + node + "=" + address;
  return text;
}

std::map<std::string, std::string> ParseNodeAddresses(const std::string& text) {
  std::map<std::string, std::string> addresses;
  std::stringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) continue;
    addresses[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return addresses;
}

}  // namespace shoal
