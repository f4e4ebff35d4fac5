// allreduce_bench: runs Shoal's, Gloo's and Open MPI's allreduce on this machine,
// in one run, and prints an nccl-tests-like Markdown table per world size: size,
// time, algorithm bandwidth, bus bandwidth (algbw * 2(n-1)/n), and Shoal's bus
// bandwidth relative to each baseline (x > 1: Shoal is faster; at small sizes it is
// the latency ratio).
//
// --transport shm (the default, what jobs get): Shoal over shared memory, Open MPI
// over its shared-memory transport (--mca btl vader,self). --transport tcp: both
// over loopback TCP. Gloo has only TCP on CPUs; it runs over loopback either way.
// --hosts H splits the ranks into H simulated hosts (blocks of ranks): Shoal then
// uses shared memory within a block and TCP across; the baselines are unchanged.
// With shared memory, Shoal over TCP only runs too, as one more baseline.
//
// Each library's sweep runs --reps times, the libraries taking turns, and each
// cell shows the best (shortest) time of its repetitions: on a shared machine
// this filters out the moments when other work held the cores.
//
// Usage: allreduce_bench [--ranks 2,4] [--min 4096] [--max 268435456] [--factor 4]
//                        [--reps 3] [--connections 1] [--skip-gloo 1] [--skip-mpi 1]
//                        [--transport shm|tcp] [--hosts 1]
// The worker binaries (allreduce_bench_{shoal,gloo,mpi}) are found next to this one.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Row {
  double seconds = 0;
  std::string algorithm;
};
using Results = std::map<size_t, Row>;

// Runs one worker and merges its rows into `out`, keeping the best time per size.
void RunWorker(const std::string& command, Results* best) {
  std::fprintf(stderr, "+ %s\n", command.c_str());
  Results& out = *best;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return;
  char line[512];
  while (std::fgets(line, sizeof(line), pipe)) {
    size_t bytes = 0;
    double seconds = 0;
    char algo[256] = {0};
    if (std::sscanf(line, "RESULT %zu %lf %255[^\n]", &bytes, &seconds, algo) >= 2) {
      auto it = out.find(bytes);
      if (it == out.end() || seconds < it->second.seconds) out[bytes] = Row{seconds, algo};
    }
  }
  int rc = pclose(pipe);
  if (rc != 0) std::fprintf(stderr, "  (exited with status %d)\n", rc);
}

std::string Size(size_t bytes) {
  if (bytes >= (1u << 20)) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes >> 10) + " KiB";
}

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  std::string ranks_list = "2,4", min = "4096", max = "268435456", factor = "4", connections = "1";
  std::string transport = "shm", hosts = "1";
  int reps = 3;
  bool skip_gloo = false, skip_mpi = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--ranks") ranks_list = v;
    else if (k == "--min") min = v;
    else if (k == "--max") max = v;
    else if (k == "--factor") factor = v;
    else if (k == "--connections") connections = v;
    else if (k == "--transport") transport = v;
    else if (k == "--hosts") hosts = v;
    else if (k == "--reps") reps = std::max(1, std::atoi(v.c_str()));
    else if (k == "--skip-gloo") skip_gloo = v != "0";
    else if (k == "--skip-mpi") skip_mpi = v != "0";
  }
  if (transport != "shm" && transport != "tcp") {
    std::fprintf(stderr, "allreduce_bench: --transport must be shm or tcp, not '%s'\n", transport.c_str());
    return 2;
  }
  const bool shm = transport == "shm";
  const std::string mpi_transport = shm ? "--mca btl vader,self" : "--mca btl tcp,self --mca btl_tcp_if_include lo";
  const std::string dir = std::filesystem::canonical("/proc/self/exe").parent_path().string();
  const std::string sweep = " --min " + min + " --max " + max + " --factor " + factor;

  std::stringstream ranks_stream(ranks_list);
  std::string item;
  while (std::getline(ranks_stream, item, ',')) {
    const int n = std::atoi(item.c_str());
    const std::string np = std::to_string(n);
    Results shoal, shoal_tcp, gloo, mpi;
    const std::string shoal_worker = dir + "/allreduce_bench_shoal --ranks " + np + sweep + " --connections " +
                                     connections + " --hosts " + hosts + " --transport ";
    for (int rep = 0; rep < reps; ++rep) {
      RunWorker(shoal_worker + transport, &shoal);
      // Shoal's own TCP path, the baseline shared memory must beat by 2x at 64 MiB.
      if (shm) RunWorker(shoal_worker + "tcp", &shoal_tcp);
      if (!skip_gloo && std::filesystem::exists(dir + "/allreduce_bench_gloo"))
        RunWorker(dir + "/allreduce_bench_gloo --ranks " + np + sweep, &gloo);
      // Same placement as the fork()ed workers: no binding.
      if (!skip_mpi && std::filesystem::exists(dir + "/allreduce_bench_mpi"))
        RunWorker("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np " + np +
                      " --oversubscribe --bind-to none --mca pml ob1 " + mpi_transport + " " +
                      dir + "/allreduce_bench_mpi" + sweep + " 2>&1",
                  &mpi);
    }

    const double bus_factor = n > 1 ? 2.0 * (n - 1) / n : 1.0;
    const std::string layout = hosts == "1" ? "" : ", Shoal's ranks on " + hosts + " simulated hosts";
    std::printf("\n### %d ranks, float32 sum, %s%s (best of %d runs per library)\n\n", n,
                shm ? "shared memory (Open MPI: vader; Gloo: loopback TCP)" : "loopback TCP", layout.c_str(), reps);
    std::printf("| size | Shoal algorithm | time (us) | algbw (GB/s) | busbw (GB/s) | Gloo time (us) | Gloo busbw | "
                "MPI time (us) | MPI busbw | x Gloo | x MPI | Shoal TCP busbw | x Shoal TCP |\n");
    std::printf("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (const auto& [bytes, row] : shoal) {
      const double algbw = bytes / row.seconds / 1e9;
      auto baseline = [&](const Results& r, std::string* time, std::string* bus, std::string* ratio) {
        auto it = r.find(bytes);
        if (it == r.end()) {
          *time = *bus = *ratio = "-";
          return;
        }
        *time = Fixed(it->second.seconds * 1e6, 1);
        *bus = Fixed(bytes / it->second.seconds / 1e9 * bus_factor, 3);
        *ratio = Fixed(it->second.seconds / row.seconds, 2);
      };
      std::string gt, gb, gr, mt, mb, mr, tt, tb, tr;
      baseline(gloo, &gt, &gb, &gr);
      baseline(mpi, &mt, &mb, &mr);
      baseline(shoal_tcp, &tt, &tb, &tr);
      std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", Size(bytes).c_str(),
                  row.algorithm.c_str(), Fixed(row.seconds * 1e6, 1).c_str(), Fixed(algbw, 3).c_str(),
                  Fixed(algbw * bus_factor, 3).c_str(), gt.c_str(), gb.c_str(), mt.c_str(), mb.c_str(), gr.c_str(),
                  mr.c_str(), tb.c_str(), tr.c_str());
    }
    std::fflush(stdout);
  }
  return 0;
}
