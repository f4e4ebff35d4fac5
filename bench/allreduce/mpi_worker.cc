// Benchmark worker: Open MPI's MPI_Allreduce. Started by mpirun (the driver forces
// the TCP transport with --mca pml ob1 --mca btl tcp,self).
#include <mpi.h>

#include <memory>

#include "sweep.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  auto args = shoal::bench::ParseSweepArgs(argc, argv);
  args.ranks = size;
  std::unique_ptr<float[]> buffer(new float[args.max_bytes / sizeof(float)]);
  shoal::bench::RunSweep(
      args, rank, buffer.get(),
      [&](size_t count) {
        MPI_Allreduce(MPI_IN_PLACE, buffer.get(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      },
      [] { MPI_Barrier(MPI_COMM_WORLD); }, [](size_t) { return std::string("MPI_Allreduce tcp"); });
  MPI_Finalize();
  return 0;
}
