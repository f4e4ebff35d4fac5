// ShellCommand: how the agent hands a task's command to /bin/sh -c.
//
// Contract: a command that is one simple command (`/usr/bin/python3 train.py --lr 0.1`:
// no ';', '&', '|', redirection, subshell, backquote or newline, and not starting with a
// shell keyword, a builtin without a program of its own, or a variable assignment) gets
// `exec ` in front, so the shell becomes the program: the pid Shoal shows (`shoal status`,
// `shoal stack`) is the program's, and the signals it gets and its exit are its own.
// Anything else runs as written, under the shell.
// Thread-safety: a pure function.
#pragma once

#include <string>

namespace shoal {

std::string ShellCommand(const std::string& command);

}  // namespace shoal
