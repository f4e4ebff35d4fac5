#include "container/shell_command.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace shoal {
namespace {

// Words `exec` cannot run as a program: the shell's keywords and its builtins that have
// no program of the same name (or whose program does something else).
constexpr std::array<std::string_view, 48> kShellWords = {
    "if",    "then",    "else",    "elif",  "fi",    "for",    "while",  "until",    "case",  "esac",
    "do",    "done",    "in",      "function", "{",  "}",      "!",      "[[",       "]]",    "time",
    ".",     ":",       "cd",      "export", "source", "set",   "unset",  "alias",    "unalias", "eval",
    "exit",  "return",  "shift",   "trap",  "wait",  "read",   "readonly", "local",  "ulimit", "umask",
    "exec",  "command", "break",   "continue", "getopts", "hash", "type", "times"};

}  // namespace

std::string ShellCommand(const std::string& command) {
  if (command.find_first_of(";&|<>()`\n\r") != std::string::npos) return command;
  size_t start = command.find_first_not_of(" \t");
  if (start == std::string::npos) return command;
  size_t end = command.find_first_of(" \t", start);
  std::string_view first(command.data() + start, (end == std::string::npos ? command.size() : end) - start);
  if (first.find('=') != std::string_view::npos || first.starts_with("#")) return command;
  if (std::find(kShellWords.begin(), kShellWords.end(), first) != kShellWords.end()) return command;
  return "exec " + command;
}

}  // namespace shoal
