#include "collective/reduce_scatter.h"

#include "collective/reduce.h"
#include "collective/ring.h"

namespace shoal::collective {

Status ReduceScatter(Communicator& comm, const void* in, void* out, size_t count, DataType type, ReduceOp op) {
  const size_t block = count * ElementSize(type);
  const int n = comm.size();
  return comm.Run("reduce_scatter", block * n, [&]() -> Status {
    if (count == 0) return Status::Ok();
    char* work = comm.Scratch(1, block * n);
    CopyBytes(work, in, block * n);
    RingPlan plan;
    plan.data = work;
    plan.type = type;
    plan.op = op;
    plan.offsets = EqualOffsets(count, n);
    plan.shift = -1;  // rank r ends owning block r
    plan.allgather = false;
    RETURN_IF_ERROR(RunRing(comm, plan));
    CopyBytes(out, work + block * comm.rank(), block);
    return Status::Ok();
  });
}

}  // namespace shoal::collective
