#include "common/fork_server.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "common/json.h"
#include "common/paths.h"

namespace shoal {
namespace {

// Where a served process's set-up failed (the reply's `step`).
enum Step : int32_t { kStepNone = 0, kStepFork, kStepSession, kStepParent, kStepDup, kStepChdir, kStepCgroup };

struct Reply {
  int32_t pid = -1;
  int32_t step = kStepNone;
  int32_t error = 0;
};

// Which of stdin, stdout and stderr travel with a request, in this order.
constexpr int kStdFds = 3;

bool WriteAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool ReadAll(int fd, void* data, size_t size) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    ssize_t n = read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// A request: its length, with the descriptors attached, then the JSON text.
bool SendRequest(int socket, const std::string& text, const std::vector<int>& fds) {
  uint32_t length = static_cast<uint32_t>(text.size());
  iovec io{&length, sizeof length};
  msghdr message{};
  message.msg_iov = &io;
  message.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kStdFds)] = {};
  if (!fds.empty()) {
    message.msg_control = control;
    message.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(header), fds.data(), sizeof(int) * fds.size());
  }
  ssize_t sent;
  do {
    sent = sendmsg(socket, &message, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  return sent == static_cast<ssize_t>(sizeof length) && WriteAll(socket, text.data(), text.size());
}

bool ReceiveRequest(int socket, std::string& text, std::vector<int>& fds) {
  uint32_t length = 0;
  iovec io{&length, sizeof length};
  msghdr message{};
  message.msg_iov = &io;
  message.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kStdFds)] = {};
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  ssize_t got;
  do {
    got = recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
  } while (got < 0 && errno == EINTR);
  if (got <= 0) return false;
  for (cmsghdr* header = CMSG_FIRSTHDR(&message); header; header = CMSG_NXTHDR(&message, header)) {
    if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    fds.resize(count);
    std::memcpy(fds.data(), CMSG_DATA(header), sizeof(int) * count);
  }
  if (got != sizeof length && !ReadAll(socket, reinterpret_cast<char*>(&length) + got, sizeof length - got)) return false;
  if (length > (64u << 20)) return false;
  text.resize(length);
  return ReadAll(socket, text.data(), length);
}

// The fields of /proc/self/stat from the third (state) on, as numbers (the state itself
// reads as 0): index N - 3 holds field N of proc(5).
std::vector<unsigned long long> StatFields() {
  std::string stat;
  if (FILE* file = std::fopen("/proc/self/stat", "r")) {
    char buffer[4096];
    size_t n = std::fread(buffer, 1, sizeof buffer, file);
    std::fclose(file);
    stat.assign(buffer, n);
  }
  std::vector<unsigned long long> fields;
  size_t after_name = stat.rfind(')');
  if (after_name == std::string::npos) return fields;
  size_t at = after_name + 1;
  while (at < stat.size()) {
    while (at < stat.size() && stat[at] == ' ') ++at;
    size_t end = stat.find(' ', at);
    if (end == std::string::npos) end = stat.size();
    if (end > at) fields.push_back(std::strtoull(stat.c_str() + at, nullptr, 10));
    at = end;
  }
  return fields;
}

// Writes `strings` (each with its NUL) into the block [start, end) in order, and zeroes
// the rest. What does not fit whole is left out: with `stop_at_first_misfit`, it and
// everything after it (arguments: a prefix of the command line, never a later argument
// in an earlier one's place); else only it (variables, each independent).
void WriteBlock(unsigned long long start, unsigned long long end, const std::vector<const std::string*>& strings,
                bool stop_at_first_misfit) {
  if (start == 0 || end <= start) return;
  char* block = reinterpret_cast<char*>(start);
  size_t size = end - start, used = 0;
  for (const std::string* s : strings) {
    if (used + s->size() + 1 > size) {
      if (stop_at_first_misfit) break;
      continue;
    }
    std::memcpy(block + used, s->c_str(), s->size() + 1);
    used += s->size() + 1;
  }
  std::memset(block + used, 0, size - used);
}

// /proc/PID/cmdline and /proc/PID/environ show the blocks a process was exec'd with,
// which a fork keeps: the requester's command line and environment (with its secrets).
// Writes the served process's own there instead, so `ps` and the leak sweeps see what an
// exec would have shown: the arguments in order, the environment with Shoal's markers
// first; what does not fit whole is left out.
void ShowInProc(const std::vector<std::string>& argv, const std::vector<std::string>& variables) {
  constexpr size_t kArgStart = 48 - 3, kArgEnd = 49 - 3, kEnvStart = 50 - 3, kEnvEnd = 51 - 3;
  std::vector<unsigned long long> fields = StatFields();
  if (fields.size() <= kEnvEnd) return;
  std::vector<const std::string*> args;
  for (const std::string& a : argv) args.push_back(&a);
  WriteBlock(fields[kArgStart], fields[kArgEnd], args, /*stop_at_first_misfit=*/true);
  std::vector<const std::string*> ordered;
  for (const std::string& v : variables) if (v.starts_with("SHOAL_")) ordered.push_back(&v);
  for (const std::string& v : variables) if (!v.starts_with("SHOAL_")) ordered.push_back(&v);
  WriteBlock(fields[kEnvStart], fields[kEnvEnd], ordered, /*stop_at_first_misfit=*/false);
}

[[noreturn]] void ServedFail(int error_fd, Step step) {
  int32_t payload[2] = {step, errno};
  (void)!write(error_fd, payload, sizeof payload);
  _exit(127);
}

// In the served process: becomes what SpawnOptions ask for, then runs the command.
[[noreturn]] void RunServed(const Json& request, const std::vector<int>& fds, int error_fd, pid_t middle,
                            pid_t requester, const ForkServer::Entry& entry) {
  if (request.value("new_session", false)) {
    if (setsid() < 0) ServedFail(error_fd, kStepSession);
  } else if (request.value("new_process_group", false) && setpgid(0, 0) < 0) {
    ServedFail(error_fd, kStepSession);
  }
  // The middle process ends at once; then this one is the requester's child (it is a
  // subreaper while it asks), and only then can a parent death signal name it.
  while (getppid() == middle) sched_yield();
  if (getppid() != requester) {
    errno = ECHILD;
    ServedFail(error_fd, kStepParent);
  }
  if (int signal = request.value("parent_death_signal", 0); signal != 0) {
    prctl(PR_SET_PDEATHSIG, signal);
    if (getppid() != requester) _exit(128 + signal);  // the requester ended meanwhile
  }
  int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  const std::vector<bool> given = request.value("fds", std::vector<bool>(kStdFds, false));
  size_t next = 0;
  for (int target = 0; target < kStdFds; ++target) {
    int source = target < static_cast<int>(given.size()) && given[target] && next < fds.size() ? fds[next++] : devnull;
    if (dup2(source, target) < 0) ServedFail(error_fd, kStepDup);
  }
  // No other descriptor of the helper's stays; the error pipe closes last.
  syscall(SYS_close_range, 3U, static_cast<unsigned>(error_fd - 1), 0U);
  syscall(SYS_close_range, static_cast<unsigned>(error_fd + 1), ~0U, 0U);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  std::string cwd = request.value("cwd", "");
  if (!cwd.empty() && chdir(cwd.c_str()) != 0) ServedFail(error_fd, kStepChdir);
  // The environment block exactly as an exec would lay it out (clearenv would leave
  // `environ` null, which programs that walk it do not expect).
  static std::vector<std::string> variables;
  static std::vector<char*> block;
  for (const auto& [name, value] : request.value("env", std::map<std::string, std::string>{})) {
    variables.push_back(name + "=" + value);
  }
  for (std::string& variable : variables) block.push_back(variable.data());
  block.push_back(nullptr);
  environ = block.data();
  std::vector<std::string> argv = request.value("argv", std::vector<std::string>{});
  ShowInProc(argv, variables);
  // Last: the setup above is Shoal's work, and a task's CPU quota may be a millisecond in
  // each 100 (`cpus: 0.01`); done inside it, every launch waited out a throttled period
  // while the requester waited for it, one agent after the other.
  if (!JoinCgroups(request.value("join_cgroups", std::vector<std::string>{}))) {
    ServedFail(error_fd, kStepCgroup);
  }
  close(error_fd);  // set up: Spawn returns
  argv.erase(argv.begin());  // the executable; the command's name leads, as main passes it
  std::exit(entry(std::move(argv)));
}

Reply Serve(const Json& request, const std::vector<int>& fds, int socket, pid_t requester,
            const ForkServer::Entry& entry) {
  int error_pipe[2], pid_pipe[2];
  if (pipe2(error_pipe, O_CLOEXEC) != 0) return Reply{-1, kStepFork, errno};
  if (pipe2(pid_pipe, O_CLOEXEC) != 0) {
    int error = errno;
    close(error_pipe[0]);
    close(error_pipe[1]);
    return Reply{-1, kStepFork, error};
  }
  pid_t middle = fork();
  if (middle == 0) {
    pid_t self = getpid();
    pid_t served = fork();
    if (served == 0) {
      close(socket);
      close(pid_pipe[0]);
      close(pid_pipe[1]);
      close(error_pipe[0]);
      RunServed(request, fds, error_pipe[1], self, requester, entry);
    }
    int32_t payload[2] = {served, served < 0 ? errno : 0};
    (void)!write(pid_pipe[1], payload, sizeof payload);
    _exit(0);
  }
  int fork_error = errno;
  close(error_pipe[1]);
  close(pid_pipe[1]);
  int32_t served[2] = {-1, fork_error};
  if (middle > 0) {
    if (!ReadAll(pid_pipe[0], served, sizeof served)) served[0] = -1;
    int status;
    while (waitpid(middle, &status, 0) < 0 && errno == EINTR) {
    }
  }
  close(pid_pipe[0]);
  Reply reply{served[0], kStepNone, 0};
  if (served[0] <= 0) {
    reply = Reply{-1, kStepFork, served[1]};
  } else {
    int32_t failed[2];
    if (ReadAll(error_pipe[0], failed, sizeof failed)) reply = Reply{served[0], failed[0], failed[1]};
  }
  close(error_pipe[0]);
  return reply;
}

[[noreturn]] void HelperMain(int socket, pid_t requester, const ForkServer::Entry& entry) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != requester) _exit(0);
  // `ps` tells the helper from the processes it serves: "shoal fork-server".
  std::vector<std::string> variables;
  for (char** e = environ; *e; ++e) variables.emplace_back(*e);
  ShowInProc({SelfExecutable(), "fork-server"}, variables);
  while (true) {
    std::string text;
    std::vector<int> fds;
    if (!ReceiveRequest(socket, text, fds)) _exit(0);  // the requester has gone
    Json request = Json::parse(text, nullptr, false);
    Reply reply = request.is_object() ? Serve(request, fds, socket, requester, entry) : Reply{-1, kStepFork, EINVAL};
    for (int fd : fds) close(fd);
    if (!WriteAll(socket, &reply, sizeof reply)) _exit(0);
  }
}

}  // namespace

Result<std::unique_ptr<ForkServer>> ForkServer::Start(const std::string& command, Entry entry) {
  std::string executable = SelfExecutable();
  int sockets[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) {
    return Internal(std::string("cannot start the fork server: socketpair: ") + strerror(errno));
  }
  pid_t requester = getpid();
  pid_t helper = fork();
  if (helper < 0) {
    int error = errno;
    close(sockets[0]);
    close(sockets[1]);
    return ResourceExhausted(std::string("cannot start the fork server: fork: ") + strerror(error));
  }
  if (helper == 0) {
    close(sockets[0]);
    HelperMain(sockets[1], requester, entry);
  }
  close(sockets[1]);
  return std::unique_ptr<ForkServer>(new ForkServer(command, std::move(executable), sockets[0], helper));
}

ForkServer::~ForkServer() {
  std::lock_guard lock(mutex_);
  if (socket_ >= 0) close(socket_);
  int status;
  while (waitpid(helper_, &status, 0) < 0 && errno == EINTR) {
  }
}

bool ForkServer::Serves(const std::vector<std::string>& argv) const {
  return argv.size() >= 2 && argv[0] == executable_ && argv[1] == command_;
}

Result<pid_t> ForkServer::Spawn(const SpawnOptions& options) {
  if (!Serves(options.argv)) return RealProcessLauncher::Instance().Spawn(options);
  std::lock_guard lock(mutex_);
  if (socket_ >= 0) {
    int subreaper = 0;
    prctl(PR_GET_CHILD_SUBREAPER, &subreaper);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    Result<pid_t> served = Request(options);
    if (!subreaper) prctl(PR_SET_CHILD_SUBREAPER, 0);
    if (served.ok() || served.status().code() != StatusCode::kUnavailable) return served;
    close(socket_);  // the helper is gone, or cannot make the caller the parent: exec from now on
    socket_ = -1;
  }
  return RealProcessLauncher::Instance().Spawn(options);
}

Result<pid_t> ForkServer::Request(const SpawnOptions& options) {
  if (options.identity) return InvalidArgument("the fork server starts processes as its own account only");
  std::vector<int> fds;
  std::vector<bool> given;
  for (int fd : {options.stdin_fd, options.stdout_fd, options.stderr_fd}) {
    given.push_back(fd >= 0);
    if (fd >= 0) fds.push_back(fd);
  }
  Json request{{"argv", options.argv},
               {"env", options.env},
               {"cwd", options.cwd},
               {"new_session", options.new_session},
               {"new_process_group", options.new_process_group},
               {"parent_death_signal", options.parent_death_signal},
               {"join_cgroups", options.join_cgroups},
               {"fds", given}};
  Reply reply;
  if (!SendRequest(socket_, request.dump(), fds) || !ReadAll(socket_, &reply, sizeof reply)) {
    return Unavailable("the fork server has gone");
  }
  if (reply.step == kStepNone) return static_cast<pid_t>(reply.pid);
  if (reply.pid > 0) RealProcessLauncher::Instance().Wait(reply.pid);  // it ended at once: reap it
  if (reply.step == kStepParent) return Unavailable("the served process could not be made this process's child");
  std::string program = options.argv[0] + " " + options.argv[1];
  std::string reason = strerror(reply.error);
  if (reply.step == kStepCgroup) return Internal("cannot start '" + program + "': cannot join its cgroup: " + reason);
  if (reply.step == kStepChdir) {
    return NotFound("cannot start '" + program + "': working directory '" + options.cwd + "': " + reason);
  }
  return Internal("cannot start '" + program + "': " + reason);
}

}  // namespace shoal
