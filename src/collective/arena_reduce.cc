#include "collective/arena_reduce.h"

#include "collective/reduce.h"

namespace shoal::collective {

void ReduceSlotsInOrder(const transport::SharedArena& arena, int half, int me, DataType type, ReduceOp op, char* dst,
                        size_t offset, size_t elements) {
  auto slot = [&](int local) { return arena.Slot(half, local) + offset; };
  const int n = arena.local_size();
  int next = 1;
  if (me <= 1) {
    Reduce(type, op, dst, slot(1 - me), elements);
    next = 2;
  } else {
    CopyBytes(dst, slot(0), elements * ElementSize(type));
  }
  for (int k = next; k < n; ++k) Reduce(type, op, dst, slot(k), elements);
}

}  // namespace shoal::collective
