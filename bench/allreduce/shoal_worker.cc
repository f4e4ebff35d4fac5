// Benchmark worker: Shoal's allreduce over its transport on this machine (shared
// memory between the ranks, or loopback TCP with --transport tcp), one fork()ed
// process per rank, meeting through a FileStore.
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
#include <filesystem>
#include <memory>
#include <span>

#include "collective/allreduce.h"
#include "collective/barrier.h"
#include "collective/hierarchical.h"
#include "collective/host_leaders.h"
#include "collective/rendezvous/file_store.h"
#include "collective/transport/tcp/device.h"
#include "fork_ranks.h"
#include "sweep.h"

using namespace shoal::collective;

namespace {
// Tuning knobs for experiments: SHOAL_BENCH_CHUNK, _DEPTH, _SOCKBUF, _SPIN_US, _SMALL
// (Options::small_allreduce_bytes), and
// SHOAL_BENCH_RING=1 (the flat ring instead of the hierarchical allreduce).
long EnvOr(const char* name, long fallback) {
  const char* v = std::getenv(name);
  return v ? std::atol(v) : fallback;
}
// --netns "a=10.77.0.1,b=10.77.0.2": real hosts made of network namespaces. Rank r
// joins namespace k = r * count / ranks (created beforehand, e.g. by
// two_namespaces.sh) and listens on that namespace's address.
struct Namespace {
  std::string name, address;
};
std::vector<Namespace> ParseNamespaces(int argc, char** argv) {
  std::vector<Namespace> out;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--netns") != 0) continue;
    std::string list = argv[i + 1];
    for (size_t at = 0; at < list.size();) {
      size_t comma = list.find(',', at);
      std::string item = list.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
      size_t eq = item.find('=');
      if (eq != std::string::npos) out.push_back(Namespace{item.substr(0, eq), item.substr(eq + 1)});
      at = comma == std::string::npos ? list.size() : comma + 1;
    }
  }
  return out;
}

bool JoinNamespace(const std::string& name) {
  int fd = open(("/var/run/netns/" + name).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) {
    std::fprintf(stderr, "cannot join network namespace %s: %s\n", name.c_str(), std::strerror(errno));
    return false;
  }
  close(fd);
  return true;
}
}  // namespace

int main(int argc, char** argv) {
  const auto args = shoal::bench::ParseSweepArgs(argc, argv);
  const auto namespaces = ParseNamespaces(argc, argv);
  const std::string dir = shoal::bench::TempDir("shoal");
  int rc = shoal::bench::ForkRanks(args.ranks, args.pin, [&](int rank) {
    FileStore store(dir);
    transport::tcp::Options tcp;
    tcp.connections_per_pair = args.connections;
    tcp.shared_memory = args.shared_memory;
    tcp.host_name = "host-" + std::to_string(rank * args.hosts / args.ranks);
    if (!namespaces.empty()) {
      const Namespace& ns = namespaces[rank * namespaces.size() / args.ranks];
      if (!JoinNamespace(ns.name)) return 1;
      tcp.host = ns.address;
    }
    tcp.socket.buffer_bytes = static_cast<int>(EnvOr("SHOAL_BENCH_SOCKBUF", tcp.socket.buffer_bytes));
    tcp.spin_us = static_cast<int>(EnvOr("SHOAL_BENCH_SPIN_US", tcp.spin_us));
    transport::tcp::Device device(tcp);
    Options options;
    options.timeout = std::chrono::milliseconds(120000);
    options.chunk_bytes = static_cast<size_t>(EnvOr("SHOAL_BENCH_CHUNK", static_cast<long>(options.chunk_bytes)));
    options.pipeline_depth = static_cast<int>(EnvOr("SHOAL_BENCH_DEPTH", options.pipeline_depth));
    options.small_allreduce_bytes =
        static_cast<size_t>(EnvOr("SHOAL_BENCH_SMALL", static_cast<long>(options.small_allreduce_bytes)));
    options.single_host_allreduce_bytes = static_cast<size_t>(
        EnvOr("SHOAL_BENCH_SINGLE_HOST", static_cast<long>(options.single_host_allreduce_bytes)));
    options.single_host_piece_bytes =
        static_cast<size_t>(EnvOr("SHOAL_BENCH_PIECE", static_cast<long>(options.single_host_piece_bytes)));
    options.flat_allreduce_bytes =
        static_cast<size_t>(EnvOr("SHOAL_BENCH_FLAT", static_cast<long>(options.flat_allreduce_bytes)));
    auto comm = Communicator::Create(device, store, rank, args.ranks, options);
    if (!comm.ok()) {
      std::fprintf(stderr, "rank %d: %s\n", rank, comm.status().ToString().c_str());
      return 1;
    }
    const bool flat = EnvOr("SHOAL_BENCH_RING", 0) != 0;
    const bool leaders = EnvOr("SHOAL_BENCH_HOST_LEADERS", 1) != 0;  // 0: plain recursive doubling
    auto algorithm_for = [&](size_t bytes) {
      if (flat) return AllreduceAlgorithm::kRing;
      if (!leaders && bytes <= (*comm)->options().small_allreduce_bytes) return AllreduceAlgorithm::kRecursiveDoubling;
      return AllreduceAlgorithm::kAuto;
    };
    std::unique_ptr<float[]> buffer(new float[args.max_bytes / sizeof(float)]);
    int failed = 0;
    shoal::bench::RunSweep(
        args, rank, buffer.get(),
        [&](size_t count) {
          shoal::Status s = Allreduce(**comm, buffer.get(), count, DataType::kFloat32, ReduceOp::kSum,
                                      algorithm_for(count * sizeof(float)));
          if (!s.ok() && !failed++) std::fprintf(stderr, "rank %d: %s\n", rank, s.ToString().c_str());
        },
        [&] { (void)Barrier(**comm); },
        [&](size_t bytes) {
          const Options& o = (*comm)->options();
          if (!flat && (*comm)->AllRanksShareTheArena() && bytes <= o.single_host_allreduce_bytes)
            return std::string(bytes <= o.flat_allreduce_bytes ? "single-host flat" : "single-host sliced");
          bool small = bytes <= o.small_allreduce_bytes;
          if (small && !flat)
            return std::string(leaders && HostLeadersApply(**comm, bytes) ? "host-leaders" : "recursive-doubling");
          return std::string(flat || HierarchicalLayout(**comm).hosts.empty() ? "ring" : "hierarchical");
        });
    return failed ? 1 : 0;
  });
  std::filesystem::remove_all(dir);
  return rc;
}
