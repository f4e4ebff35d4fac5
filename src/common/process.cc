#include "common/process.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/close_range.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>

#include "common/files.h"

extern char** environ;

namespace shoal {

std::string ExitInfo::Describe() const {
  if (signal != 0) {
    const char* name = strsignal(signal);
    return "killed by signal " + std::to_string(signal) + (name ? std::string(" (") + name + ")" : "");
  }
  return "exit code " + std::to_string(exit_code);
}

namespace {

ExitInfo FromWaitStatus(int status) {
  ExitInfo info;
  if (WIFSIGNALED(status)) {
    info.signal = WTERMSIG(status);
    info.exit_code = 128 + info.signal;
  } else if (WIFEXITED(status)) {
    info.exit_code = WEXITSTATUS(status);
  }
  return info;
}

// Writes the failing step and errno to the parent and exits; async-signal-safe.
[[noreturn]] void ChildFail(int fd, int step) {
  int payload[2] = {step, errno};
  ssize_t ignored = write(fd, payload, sizeof payload);
  (void)ignored;
  _exit(127);
}

enum ChildStep { kStepChdir = 1, kStepSession, kStepDup, kStepExec, kStepCgroup, kStepIdentity };

}  // namespace

namespace {
std::atomic<uint64_t> children_open_files{0};  // 0: children inherit this process's limit
}  // namespace

bool JoinCgroups(const std::vector<std::string>& procs_files) {
  for (const std::string& file : procs_files) {
    int fd = open(file.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return false;
    bool written = write(fd, "0", 1) == 1;
    int error = errno;
    close(fd);
    if (!written) {
      errno = error;
      return false;
    }
  }
  return true;
}

void KeepChildrensOpenFileLimit(uint64_t soft) {
  uint64_t unset = 0;
  children_open_files.compare_exchange_strong(unset, soft);  // the first limit recorded is the original
}

Result<pid_t> RealProcessLauncher::Spawn(const SpawnOptions& options) {
  if (options.argv.empty() || options.argv[0].empty()) return InvalidArgument("no program to start");

  // Everything the child needs is prepared before fork: after it, only async-signal-safe calls.
  std::vector<std::string> env_strings;
  env_strings.reserve(options.env.size());
  for (const auto& [key, value] : options.env) env_strings.push_back(key + "=" + value);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = options.argv;
  std::vector<char*> argv;
  for (auto& s : argv_copy) argv.push_back(s.data());
  argv.push_back(nullptr);

  std::string program = options.argv[0];
  std::vector<std::string> candidates;
  if (program.find('/') != std::string::npos) {
    candidates.push_back(program);
  } else {
    auto path_it = options.env.find("PATH");
    std::string path = path_it != options.env.end() ? path_it->second : "/usr/local/bin:/usr/bin:/bin";
    size_t start = 0;
    while (start <= path.size()) {
      size_t end = path.find(':', start);
      if (end == std::string::npos) end = path.size();
      std::string dir = path.substr(start, end - start);
      candidates.push_back((dir.empty() ? "." : dir) + "/" + program);
      start = end + 1;
    }
  }

  int error_pipe[2];
  if (pipe2(error_pipe, O_CLOEXEC) != 0) return Internal(std::string("pipe: ") + strerror(errno));
  int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);

  const rlim_t open_files = children_open_files.load();
  pid_t pid = fork();
  if (pid < 0) {
    int err = errno;
    close(error_pipe[0]);
    close(error_pipe[1]);
    if (devnull >= 0) close(devnull);
    return ResourceExhausted(std::string("cannot start a process: fork failed: ") + strerror(err));
  }
  if (pid == 0) {
    int fd = error_pipe[1];
    if (!JoinCgroups(options.join_cgroups)) ChildFail(fd, kStepCgroup);
    if (options.new_session && setsid() < 0) ChildFail(fd, kStepSession);
    if (!options.new_session && options.new_process_group && setpgid(0, 0) < 0) ChildFail(fd, kStepSession);
    if (const auto& id = options.identity;
        id && (setgroups(id->groups.size(), id->groups.data()) != 0 || setgid(id->gid) != 0 || setuid(id->uid) != 0)) {
      ChildFail(fd, kStepIdentity);
    }
    if (options.parent_death_signal != 0) {
      prctl(PR_SET_PDEATHSIG, options.parent_death_signal);
    }
    if (rlimit files{}; open_files != 0 && getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != open_files) {
      files.rlim_cur = open_files;
      setrlimit(RLIMIT_NOFILE, &files);
    }
    int in = options.stdin_fd >= 0 ? options.stdin_fd : devnull;
    int out = options.stdout_fd >= 0 ? options.stdout_fd : devnull;
    int err = options.stderr_fd >= 0 ? options.stderr_fd : devnull;
    if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) ChildFail(fd, kStepDup);
    // Every other descriptor closes at exec; the error pipe too, which tells the parent exec worked.
    syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (!options.cwd.empty() && chdir(options.cwd.c_str()) != 0) ChildFail(fd, kStepChdir);
    int exec_errno = ENOENT;
    for (const auto& candidate : candidates) {
      execve(candidate.c_str(), argv.data(), envp.data());
      if (errno != ENOENT && errno != ENOTDIR) exec_errno = errno;
    }
    errno = exec_errno;
    ChildFail(fd, kStepExec);
  }

  close(error_pipe[1]);
  if (devnull >= 0) close(devnull);
  int payload[2] = {0, 0};
  ssize_t n;
  do {
    n = read(error_pipe[0], payload, sizeof payload);
  } while (n < 0 && errno == EINTR);
  close(error_pipe[0]);
  if (n <= 0) return pid;  // exec succeeded: the pipe closed without a word

  int status = 0;
  waitpid(pid, &status, 0);
  std::string reason = strerror(payload[1]);
  switch (payload[0]) {
    case kStepChdir:
      return NotFound("cannot start '" + program + "': working directory '" + options.cwd + "': " + reason);
    case kStepExec:
      return NotFound("cannot start '" + program + "': " + reason +
                      (payload[1] == ENOENT ? " (check the command's path and PATH)" : ""));
    case kStepCgroup:
      return Internal("cannot start '" + program + "': cannot join its cgroup: " + reason);
    case kStepIdentity:
      return PermissionDenied("cannot start '" + program + "' as uid " + std::to_string(options.identity->uid) + ": " +
                              reason + " (only a server running as root runs jobs as other accounts)");
    default:
      return Internal("cannot start '" + program + "': " + reason);
  }
}

void RealProcessLauncher::Signal(pid_t pid, int sig) {
  if (pid > 0) kill(pid, sig);
}

void RealProcessLauncher::SignalGroup(pid_t pgid, int sig) {
  if (pgid > 0) kill(-pgid, sig);
}

std::optional<ExitInfo> RealProcessLauncher::TryWait(pid_t pid) {
  int status = 0;
  pid_t r = waitpid(pid, &status, WNOHANG);
  if (r == pid) return FromWaitStatus(status);
  if (r < 0 && errno == ECHILD) return ExitInfo{.exit_code = 255, .signal = 0};
  return std::nullopt;
}

ExitInfo RealProcessLauncher::Wait(pid_t pid) {
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid, &status, 0);
  } while (r < 0 && errno == EINTR);
  if (r < 0) return ExitInfo{.exit_code = 255, .signal = 0};
  return FromWaitStatus(status);
}

RealProcessLauncher& RealProcessLauncher::Instance() {
  static RealProcessLauncher launcher;
  return launcher;
}

std::map<std::string, std::string> CurrentEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string entry(*e);
    size_t eq = entry.find('=');
    if (eq == std::string::npos) continue;
    env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return env;
}

bool ProcessExists(pid_t pid) { return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM); }

bool ProcessRunning(pid_t pid) {
  if (!ProcessExists(pid)) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;  // no /proc: assume it runs
  size_t close_paren = line.rfind(')');        // the command name may hold spaces and parentheses
  return close_paren == std::string::npos || close_paren + 2 >= line.size() || line[close_paren + 2] != 'Z';
}

namespace {

// The whole of /proc/PID/NAME; empty when it cannot be read.
std::string ReadProcFile(const std::string& pid, const char* name) {
  Result<std::string> text = ReadFile("/proc/" + pid + "/" + name);
  return text.ok() ? *std::move(text) : std::string();
}

// Whether the process runs a program: kernel threads and zombies have none, and another
// user's process cannot be told (its environment cannot be read either).
bool HasExecutable(const std::string& pid) {
  char target[16];
  return readlink(("/proc/" + pid + "/exe").c_str(), target, sizeof target) >= 0;
}

// The process's environment (NAME=value entries, each ended by '\0'); empty when it has
// none or it cannot be read. It also reads empty while the process execs: through a file
// opened on the program it leaves, and until the kernel has set up the new one's stack,
// when its command line reads empty too. Then it is read again, for at most 20 ms.
std::string ReadEnvironment(const std::string& pid) {
  std::string text = ReadProcFile(pid, "environ");
  for (int tries = 0; text.empty() && tries < 40 && HasExecutable(pid); ++tries) {
    const bool settled = !ReadProcFile(pid, "cmdline").empty();  // no exec under way, or it is done
    text = ReadProcFile(pid, "environ");
    if (settled) break;  // read after the exec: what it says holds, even empty
    if (text.empty()) std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  return text;
}

}  // namespace

std::vector<pid_t> FindProcessesWithEnvironment(const std::vector<std::string>& markers) {
  std::vector<pid_t> found;
  DIR* proc = opendir("/proc");
  if (!proc) return found;
  while (dirent* entry = readdir(proc)) {
    char* end = nullptr;
    long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    std::string environ_text = ReadEnvironment(entry->d_name);
    size_t matched = 0;
    for (const auto& marker : markers) {
      std::string needle = marker;
      needle.push_back('\0');
      if (environ_text.compare(0, needle.size(), needle) == 0 ||
          environ_text.find(std::string(1, '\0') + needle) != std::string::npos) {
        ++matched;
      }
    }
    if (matched == markers.size() && !markers.empty()) found.push_back(static_cast<pid_t>(pid));
  }
  closedir(proc);
  return found;
}

int KillProcessesWithEnvironment(const std::vector<std::string>& markers, int timeout_ms) {
  int killed = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  const pid_t self = getpid();
  while (true) {
    std::vector<pid_t> pids = FindProcessesWithEnvironment(markers);
    std::erase(pids, self);
    if (pids.empty() || std::chrono::steady_clock::now() > deadline) break;
    for (pid_t pid : pids) {
      if (kill(pid, SIGKILL) == 0) ++killed;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return killed;
}

Result<CapturedOutput> RunAndCapture(ProcessLauncher& processes, std::vector<std::string> argv, int timeout_ms) {
  char scratch[] = "/tmp/shoal-output-XXXXXX";
  int fd = mkstemp(scratch);
  if (fd < 0) return Unavailable(std::string("cannot create a scratch file in /tmp: ") + strerror(errno));
  unlink(scratch);
  auto pid = processes.Spawn({.argv = std::move(argv), .env = CurrentEnvironment(), .new_process_group = true,
                              .stdout_fd = fd, .stderr_fd = fd});
  if (!pid.ok()) {
    close(fd);
    return pid.status();
  }
  CapturedOutput out;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    if (auto exit = processes.TryWait(*pid)) {
      out.exit = *exit;
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      processes.SignalGroup(*pid, SIGKILL);
      out.exit = processes.Wait(*pid);
      out.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  lseek(fd, 0, SEEK_SET);
  char buffer[8192];
  for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) out.text.append(buffer, static_cast<size_t>(n));
  close(fd);
  return out;
}

std::string SelfExecutable() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "shoal";
  buf[n] = '\0';
  return buf;
}

}  // namespace shoal
