#include "common/fork_server.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/paths.h"

namespace shoal {
namespace {

// A served command that tells what it became: its arguments, directory, environment,
// descriptors, session and parent, on stdout; it exits with its first argument.
int Describe(std::vector<std::string> args) {
  int descriptors = -1;  // the listing's own descriptor is not the child's
  if (DIR* dir = opendir("/proc/self/fd")) {
    while (readdir(dir)) ++descriptors;
    closedir(dir);
    descriptors -= 2;  // "." and ".."
  }
  int variables = 0;
  for (char** e = environ; *e; ++e) ++variables;
  char cwd[4096] = "";
  (void)!getcwd(cwd, sizeof cwd);
  std::string shown;  // /proc/self/environ, NULs as '|', the zeroed rest left out
  if (FILE* file = std::fopen("/proc/self/environ", "r")) {
    for (int c; (c = std::fgetc(file)) != EOF;) shown += c == 0 ? '|' : static_cast<char>(c);
    std::fclose(file);
  }
  while (shown.ends_with("||")) shown.pop_back();
  std::string command_line;  // /proc/self/cmdline likewise
  if (FILE* file = std::fopen("/proc/self/cmdline", "r")) {
    for (int c; (c = std::fgetc(file)) != EOF;) command_line += c == 0 ? '|' : static_cast<char>(c);
    std::fclose(file);
  }
  while (command_line.ends_with("||")) command_line.pop_back();
  const char* x = getenv("X");
  std::string text = "command=" + args[0] + " cwd=" + cwd + " X=" + (x ? x : "-") + " variables=" +
                     std::to_string(variables) + " descriptors=" + std::to_string(descriptors) +
                     " own_session=" + std::to_string(getsid(0) == getpid()) + " parent=" + std::to_string(getppid()) + " proc=" + shown + " cmdline=" + command_line + "\n";
  (void)!write(1, text.data(), text.size());
  _exit(std::atoi(args.at(1).c_str()));  // no test framework teardown in the child
}

std::string ReadAll(int fd) {
  std::string out;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof buffer)) > 0) out.append(buffer, static_cast<size_t>(n));
  return out;
}

TEST(ForkServer, ServedProcessesAreTheCallersChildrenAndGetExactlyWhatTheyAskFor) {
  auto server = ForkServer::Start("describe", Describe);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  int out[2];
  ASSERT_EQ(pipe2(out, O_CLOEXEC), 0);
  int stray = open("/dev/null", O_RDONLY);  // a descriptor of the caller's, not the child's
  auto pid = (*server)->Spawn({.argv = {SelfExecutable(), "describe", "7"},
                               .env = {{"X", "1"}, {"PATH", "/bin"}},
                               .cwd = "/tmp",
                               .new_session = true,
                               .parent_death_signal = SIGTERM,
                               .stdout_fd = out[1]});
  close(out[1]);
  close(stray);
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  std::string said = ReadAll(out[0]);
  close(out[0]);
  // The served command line takes the caller's block: as many arguments as fit whole,
  // from the first (run alone, this test's own command line may be too short for all).
  const int own_cmdline = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  const size_t block = ReadAll(own_cmdline).size();
  close(own_cmdline);
  std::string shown_arguments;
  size_t used = 0;
  for (const std::string& argument : {SelfExecutable(), std::string("describe"), std::string("7")}) {
    if (used + argument.size() + 1 > block) break;
    used += argument.size() + 1;
    shown_arguments += argument + "|";
  }
  const std::string before_cmdline = "command=describe cwd=/tmp X=1 variables=2 descriptors=3 own_session=1 parent=" +
                                     std::to_string(getpid()) + " proc=PATH=/bin|X=1| cmdline=";
  ASSERT_TRUE(said.starts_with(before_cmdline)) << said << "\n/proc/PID/environ shows the served process's, not the caller's";
  const std::string cmdline = said.substr(before_cmdline.size());
  if (!shown_arguments.empty()) {
    EXPECT_EQ(cmdline, shown_arguments + "\n") << "/proc/PID/cmdline shows the served process's, not the caller's";
  } else {  // not even the executable fits: the caller's arguments are wiped, none shown
    EXPECT_EQ(cmdline.find_first_not_of("|\n"), std::string::npos) << cmdline;
  }
  ExitInfo exit = (*server)->Wait(*pid);
  EXPECT_EQ(exit.exit_code, 7) << "the caller waits for it as for its own child";
  EXPECT_EQ(exit.signal, 0);
}

TEST(ForkServer, AMissingDirectoryIsAnErrorAtSpawnAndOtherProgramsAreExeced) {
  auto server = ForkServer::Start("describe", Describe);
  ASSERT_TRUE(server.ok());
  auto missing = (*server)->Spawn({.argv = {SelfExecutable(), "describe", "0"}, .cwd = "/no/such/dir"});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("/no/such/dir"), std::string::npos) << missing.status().message();
  EXPECT_FALSE((*server)->Serves({"/bin/sh", "describe"})) << "only this executable's own command is served";
  auto execed = (*server)->Spawn({.argv = {"/bin/sh", "-c", "exit 4"}, .env = CurrentEnvironment()});
  ASSERT_TRUE(execed.ok()) << execed.status().ToString();
  EXPECT_EQ((*server)->Wait(*execed).exit_code, 4);
  // After the failure the helper still serves.
  auto again = (*server)->Spawn({.argv = {SelfExecutable(), "describe", "5"}});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ((*server)->Wait(*again).exit_code, 5);
}

TEST(ForkServer, ManySpawnsInARowEachEndAsTheirOwn) {
  auto server = ForkServer::Start("describe", Describe);
  ASSERT_TRUE(server.ok());
  std::vector<pid_t> pids;
  for (int i = 0; i < 20; ++i) {
    auto pid = (*server)->Spawn({.argv = {SelfExecutable(), "describe", std::to_string(i)}});
    ASSERT_TRUE(pid.ok()) << pid.status().ToString();
    pids.push_back(*pid);
  }
  for (int i = 0; i < 20; ++i) EXPECT_EQ((*server)->Wait(pids[i]).exit_code, i);
}

}  // namespace
}  // namespace shoal
