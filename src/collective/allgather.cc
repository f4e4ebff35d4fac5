#include "collective/allgather.h"

#include <cstring>

#include "collective/ring.h"

namespace shoal::collective {

Status Allgather(Communicator& comm, const void* in, void* out, size_t count, DataType type) {
  const size_t block = count * ElementSize(type);
  const int n = comm.size();
  return comm.Run("allgather", block * n, [&]() -> Status {
    if (count == 0) return Status::Ok();
    char* own = static_cast<char*>(out) + block * comm.rank();
    if (own != in) std::memmove(own, in, block);
    RingPlan plan;
    plan.data = static_cast<char*>(out);
    plan.type = type;
    plan.offsets = EqualOffsets(count, n);
    plan.shift = -1;  // rank r starts owning block r
    plan.reduce_scatter = false;
    return RunRing(comm, plan);
  });
}

}  // namespace shoal::collective
