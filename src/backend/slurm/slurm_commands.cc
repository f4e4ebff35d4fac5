#include "backend/slurm/slurm_commands.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/clock.h"
#include "common/process.h"

namespace shoal {
namespace {

std::string Trim(const std::string& s) {
  size_t begin = s.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(" \t\r\n") - begin + 1);
}

}  // namespace

std::string CommandOutput::Said() const {
  std::string said = Trim(err);
  return said.empty() ? Trim(out) : said;
}

RealSlurmCommands& RealSlurmCommands::Instance() {
  static RealSlurmCommands instance;
  return instance;
}

Result<CommandOutput> RealSlurmCommands::Run(const std::vector<std::string>& argv,
                                             const std::map<std::string, std::string>& extra_env, int timeout_ms) {
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return Unavailable("cannot create a pipe for " + argv.at(0));
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return Unavailable("cannot create a pipe for " + argv.at(0));
  }
  auto env = CurrentEnvironment();
  for (const auto& [k, v] : extra_env) env[k] = v;
  auto& processes = RealProcessLauncher::Instance();
  auto pid = processes.Spawn({.argv = argv, .env = env, .new_process_group = true,
                              .stdout_fd = out_pipe[1], .stderr_fd = err_pipe[1]});
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (!pid.ok()) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    return Unavailable("cannot run " + argv.at(0) + ": " + pid.status().message() +
                       "; is Slurm's client installed on the server's machine?");
  }
  CommandOutput result;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  auto& clock = SystemClock::Instance();
  int64_t deadline = clock.NowMillis() + timeout_ms;
  bool timed_out = false;
  while (open_fds > 0) {
    int64_t left = deadline - clock.NowMillis();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    if (poll(fds, 2, static_cast<int>(std::min<int64_t>(left, 1000))) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buffer[8192];
      ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& fd : fds) {
    if (fd.fd >= 0) close(fd.fd);
  }
  if (timed_out) processes.SignalGroup(*pid, SIGKILL);
  ExitInfo exit = processes.Wait(*pid);
  if (timed_out) return Unavailable(argv.at(0) + " did not answer within " + std::to_string(timeout_ms / 1000) + " s");
  result.exit_code = exit.signal ? 128 + exit.signal : exit.exit_code;
  return result;
}

}  // namespace shoal
