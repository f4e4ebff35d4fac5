// Starts `ranks` copies of a benchmark rank as fork()ed processes on this machine
// and waits for them; used by the Shoal and Gloo workers (MPI uses mpirun).
// With pin, rank r is bound to CPU r % cores, as mpirun binds its ranks by default,
// so every library is measured with the same placement.
// Returns 0 when every rank exited 0.
#pragma once

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <vector>

namespace shoal::bench {

inline int ForkRanks(int ranks, bool pin, const std::function<int(int rank)>& body) {
  std::vector<pid_t> pids;
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  for (int r = 0; r < ranks; ++r) {
    pid_t pid = fork();
    if (pid == 0) {
      if (pin && cores > 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(r % cores, &set);
        sched_setaffinity(0, sizeof(set), &set);
      }
      int rc = body(r);
      std::fflush(stdout);
      _exit(rc);
    }
    pids.push_back(pid);
  }
  int failures = 0;
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failures;
  }
  return failures == 0 ? 0 : 1;
}

// A fresh directory for a file-based rendezvous.
inline std::string TempDir(const char* tag) {
  char path[] = "/tmp/shoal-bench-XXXXXX";
  if (!mkdtemp(path)) return std::string("/tmp/shoal-bench-") + tag;
  return path;
}

}  // namespace shoal::bench
