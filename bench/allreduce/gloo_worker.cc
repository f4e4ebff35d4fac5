// Benchmark worker: Gloo's allreduce (gloo::allreduce, its default ring) over its
// TCP transport on loopback, one fork()ed process per rank, meeting through
// Gloo's FileStore.
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "fork_ranks.h"
#include "sweep.h"

int main(int argc, char** argv) {
  const auto args = shoal::bench::ParseSweepArgs(argc, argv);
  const std::string dir = shoal::bench::TempDir("gloo");
  int rc = shoal::bench::ForkRanks(args.ranks, args.pin, [&](int rank) {
    try {
      gloo::transport::tcp::attr attr;
      attr.hostname = "127.0.0.1";
      auto device = gloo::transport::tcp::CreateDevice(attr);
      gloo::rendezvous::FileStore store(dir);
      auto context = std::make_shared<gloo::rendezvous::Context>(rank, args.ranks);
      context->setTimeout(std::chrono::milliseconds(120000));
      context->connectFullMesh(store, device);
      std::unique_ptr<float[]> buffer(new float[args.max_bytes / sizeof(float)]);
      uint32_t tag = 0;
      shoal::bench::RunSweep(
          args, rank, buffer.get(),
          [&](size_t count) {
            gloo::AllreduceOptions opts(context);
            opts.setOutput(buffer.get(), count);
            opts.setReduceFunction(
                static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
            opts.setTag(tag++);
            gloo::allreduce(opts);
          },
          [&] {
            gloo::BarrierOptions opts(context);
            opts.setTag(tag++);
            gloo::barrier(opts);
          },
          [](size_t) { return std::string("gloo::allreduce ring"); });
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gloo rank %d: %s\n", rank, e.what());
      return 1;
    }
    return 0;
  });
  std::filesystem::remove_all(dir);
  return rc;
}
