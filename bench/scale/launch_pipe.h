// The line protocol between bench_scale's AM process and its simulated agents (in the
// bench's own process): what a real AM's ContainerLauncher does with processes, told
// over two pipes instead.
//
//   AM -> bench:  "launch <container> <role> <index> <task token> <am addr>"
//                 "stop <container>"   (ContainerLauncher::Stop and Kill)
//   bench -> AM:  "ended <container> <exit code> <signal>"
//
// Contract: fields are single words (roles, ids, tokens and addresses hold no spaces);
// ParseLaunchLine returns the words of one line, without its newline. ReadLines calls
// `line` for each whole line read from fd until EOF or an error.
// Thread-safety: pure functions; ReadLines blocks its caller.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace shoal::bench {

std::vector<std::string> ParseLaunchLine(const std::string& line);
// Writes the whole line (and its newline) to fd; false when the pipe is gone.
bool WriteLine(int fd, const std::string& line);
void ReadLines(int fd, const std::function<void(const std::string&)>& line);

}  // namespace shoal::bench
