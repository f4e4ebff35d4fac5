#include "collective/single_host.h"

#include <algorithm>

#include "collective/reduce.h"
#include "collective/ring.h"

namespace shoal::collective {
namespace {

// dst = slot 0 (+) slot 1 (+) ... (+) slot n-1 over `elements` elements from byte
// `offset` of each slot of `half`, where dst already holds rank `me`'s own values
// (and, for ranks from 2 up, so does rank me's slot).
// Ranks 0 and 1 start from their own values: by commutativity, a (+) b is b (+) a
// bit for bit, so every rank combines the same operands in the same order.
void ReduceInRankOrder(const transport::SharedArena& arena, int half, int n, int me, DataType type, ReduceOp op,
                       char* dst, size_t offset, size_t elements) {
  auto slot = [&](int rank) { return arena.Slot(half, rank) + offset; };
  int next = 1;
  if (me <= 1) {
    Reduce(type, op, dst, slot(1 - me), elements);
    next = 2;
  } else {
    CopyBytes(dst, slot(0), elements * ElementSize(type));
  }
  for (int k = next; k < n; ++k) Reduce(type, op, dst, slot(k), elements);
  if (op == ReduceOp::kAverage) Scale(type, dst, elements, n);
}

}  // namespace

Status SingleHostAllreduce(Communicator& comm, char* data, size_t count, DataType type, ReduceOp op) {
  transport::SharedArena& arena = *comm.arena();
  const int n = comm.size(), me = comm.rank();
  const size_t element = ElementSize(type);
  const size_t piece_elements =
      std::max<size_t>(1, std::min(arena.slot_bytes(), comm.options().single_host_piece_bytes) / element);
  const bool flat = count * element <= comm.options().flat_allreduce_bytes;
  for (size_t done = 0; done < count; done += piece_elements) {
    const size_t m = std::min(piece_elements, count - done);
    char* piece = data + done * element;
    const int half = arena.NextHalf();
    char* mine = arena.Slot(half, me);
    if (flat) {
      CopyBytes(mine, piece, m * element);
      RETURN_IF_ERROR(comm.ArenaBarrier());
      ReduceInRankOrder(arena, half, n, me, type, op, piece, 0, m);
      continue;
    }
    // The other ranks never read this rank's slice; ranks 0 and 1 reduce it from
    // their buffers (ReduceInRankOrder), others from the slot.
    const std::vector<size_t> offsets = BalancedOffsets(m, n);
    const size_t begin = offsets[me] * element, bytes = (offsets[me + 1] - offsets[me]) * element;
    if (me <= 1) {
      CopyBytes(mine, piece, begin);
      CopyBytes(mine + begin + bytes, piece + begin + bytes, m * element - begin - bytes);
    } else {
      CopyBytes(mine, piece, m * element);
    }
    RETURN_IF_ERROR(comm.ArenaBarrier());
    ReduceInRankOrder(arena, half, n, me, type, op, piece + begin, begin, offsets[me + 1] - offsets[me]);
    CopyBytes(mine + begin, piece + begin, bytes);
    RETURN_IF_ERROR(comm.ArenaBarrier());
    for (int owner = 0; owner < n; ++owner) {
      if (owner == me) continue;
      const size_t at = offsets[owner] * element;
      CopyBytes(piece + at, arena.Slot(half, owner) + at, (offsets[owner + 1] - offsets[owner]) * element);
    }
  }
  return Status::Ok();
}

}  // namespace shoal::collective
