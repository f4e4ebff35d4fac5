// The measurement loop shared by the three allreduce benchmark workers (Shoal,
// Gloo, MPI), so all three are timed the same way, nccl-tests style:
// for each size, a few warm-up calls, a barrier, `iters` calls, a barrier; the
// time per call is the elapsed time over iters as seen by rank 0, which prints
//   RESULT <bytes> <seconds per call> <algorithm>
// Workers also share the argument parsing: --ranks N --min BYTES --max BYTES
// --factor F --pin 0|1, and for Shoal --transport shm|tcp and --hosts H (ranks
// assigned to H simulated hosts in blocks: shared memory within, TCP across). Thread-safety: single-threaded helpers.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace shoal::bench {

struct SweepArgs {
  int ranks = 2;
  size_t min_bytes = 4 << 10;
  size_t max_bytes = 256 << 20;
  size_t factor = 4;
  int connections = 1;  // Shoal only: TCP connections per pair
  bool pin = false;     // bind rank r to CPU r % cores (fork()ed workers)
  bool shared_memory = true;  // Shoal only: --transport shm (default) or tcp
  int hosts = 1;              // Shoal only: simulated hosts, ranks in blocks
};

inline SweepArgs ParseSweepArgs(int argc, char** argv) {
  SweepArgs a;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--netns") continue;  // the Shoal worker's own
    if (k == "--transport") {
      a.shared_memory = std::string(argv[i + 1]) != "tcp";
      continue;
    }
    size_t v = std::strtoull(argv[i + 1], nullptr, 10);
    if (k == "--ranks") a.ranks = static_cast<int>(v);
    else if (k == "--min") a.min_bytes = v;
    else if (k == "--max") a.max_bytes = v;
    else if (k == "--factor") a.factor = v;
    else if (k == "--connections") a.connections = static_cast<int>(v);
    else if (k == "--pin") a.pin = v != 0;
    else if (k == "--hosts") a.hosts = std::max<int>(1, static_cast<int>(v));
  }
  return a;
}

// Calls per size: many for latency-bound sizes (up to 2,000, so that a rare
// descheduling of one rank on a busy machine does not decide the result), a few for
// the largest.
inline int Iterations(size_t bytes) {
  if (const char* fixed = std::getenv("SHOAL_BENCH_ITERS")) return std::max(1, std::atoi(fixed));
  size_t by_volume = (size_t{1} << 29) / bytes;  // ~512 MiB per size
  return static_cast<int>(std::max<size_t>(5, std::min<size_t>(2000, by_volume)));
}

// allreduce(ptr, count) reduces `count` float32 in place; barrier() synchronises.
inline void RunSweep(const SweepArgs& args, int rank, float* buffer,
                     const std::function<void(size_t count)>& allreduce, const std::function<void()>& barrier,
                     const std::function<std::string(size_t bytes)>& algorithm_name) {
  using Clock = std::chrono::steady_clock;
  for (size_t bytes = args.min_bytes; bytes <= args.max_bytes; bytes *= args.factor) {
    const size_t count = bytes / sizeof(float);
    for (size_t i = 0; i < count; ++i) buffer[i] = 1.0f;
    const int iters = Iterations(bytes);
    for (int i = 0; i < std::max(2, iters / 10); ++i) allreduce(count);
    barrier();
    auto start = Clock::now();
    for (int i = 0; i < iters; ++i) allreduce(count);
    barrier();
    double seconds = std::chrono::duration<double>(Clock::now() - start).count() / iters;
    if (rank == 0) {
      std::printf("RESULT %zu %.9f %s\n", bytes, seconds, algorithm_name(bytes).c_str());
      std::fflush(stdout);
    }
  }
}

}  // namespace shoal::bench
