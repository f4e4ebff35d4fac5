#include "submission/launch_limits.h"

#include <unistd.h>

#include <algorithm>

namespace shoal {
namespace {

std::string Bytes(size_t n) { return std::to_string(n) + " bytes"; }

// The bytes one string takes in an exec: its text, its NUL and its pointer.
size_t ExecBytes(size_t length) { return length + 1 + sizeof(char*); }

}  // namespace

ArgumentLimits ArgumentLimits::OfThisMachine() {
  ArgumentLimits limits;
  long page = sysconf(_SC_PAGESIZE);
  if (page > 0) limits.max_argument_bytes = 32 * static_cast<size_t>(page);
  long total = sysconf(_SC_ARG_MAX);
  if (total > 0) limits.max_total_bytes = static_cast<size_t>(total);
  return limits;
}

std::vector<SpecIssue> CheckLaunchLimits(const JobSpec& spec, const ArgumentLimits& limits) {
  std::vector<SpecIssue> issues;
  size_t command_limit = limits.max_argument_bytes - std::min(limits.max_argument_bytes, kShoalWrapperBytes + 1);
  auto check_command = [&](const std::string& field, const std::string& command) {
    if (command.size() <= command_limit) return;
    issues.push_back({field, "is " + Bytes(command.size()) + ", more than the " + Bytes(command_limit) +
                                 " the kernel passes to a program in one argument (MAX_ARG_STRLEN, " +
                                 Bytes(limits.max_argument_bytes) + ", less Shoal's wrapper), so no task could start",
                      "put the command in a script and ship it (files:), or let the program read long arguments from a file"});
  };
  auto check_variables = [&](const std::string& field, const std::map<std::string, std::string>& env) {
    for (const auto& [name, value] : env) {
      size_t length = name.size() + 1 + value.size();
      if (length + 1 <= limits.max_argument_bytes) continue;
      issues.push_back({field + "." + name, "NAME=value is " + Bytes(length) + ", more than the " +
                                                Bytes(limits.max_argument_bytes - 1) +
                                                " the kernel passes in one variable (MAX_ARG_STRLEN), so no task could start",
                        "ship the value in a file (files:) and give the variable its path"});
    }
  };
  check_variables("env", spec.env);
  if (!spec.board.command.empty()) check_command("board.command", spec.board.command);
  size_t total_limit = limits.max_total_bytes - std::min(limits.max_total_bytes, kShoalReserveBytes);
  for (const RoleSpec& role : spec.roles) {
    std::string prefix = "roles." + role.name;
    check_command(prefix + ".command", role.command);
    check_variables(prefix + ".env", role.env);
    std::map<std::string, std::string> env = spec.env;
    for (const auto& [name, value] : role.env) env[name] = value;
    size_t total = ExecBytes(std::string("/bin/sh").size()) + ExecBytes(2) + ExecBytes(role.command.size());
    for (const auto& [name, value] : env) total += ExecBytes(name.size() + 1 + value.size());
    if (total <= total_limit) continue;
    issues.push_back({prefix, "its command and variables take " + Bytes(total) + ", more than the " + Bytes(total_limit) +
                                  " the kernel passes to a program (ARG_MAX, " + Bytes(limits.max_total_bytes) +
                                  ", less " + Bytes(kShoalReserveBytes) + " for Shoal's own variables), so no task could start",
                      "move large values into files (files:) and pass their paths"});
  }
  return issues;
}

}  // namespace shoal
