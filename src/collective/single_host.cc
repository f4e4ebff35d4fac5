#include "collective/single_host.h"

#include <algorithm>

#include "collective/arena_reduce.h"
#include "collective/reduce.h"
#include "collective/ring.h"

namespace shoal::collective {

Status SingleHostAllreduce(Communicator& comm, char* data, size_t count, DataType type, ReduceOp op) {
  transport::SharedArena& arena = *comm.arena();
  const int n = arena.local_size(), me = arena.local_index();  // every rank is local
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
      ReduceSlotsInOrder(arena, half, me, type, op, piece, 0, m);
      if (op == ReduceOp::kAverage) Scale(type, piece, m, n);
      continue;
    }
    // The other ranks never read this rank's slice; ranks 0 and 1 reduce it from
    // their buffers (ReduceSlotsInOrder), others from the slot.
    const std::vector<size_t> offsets = BalancedOffsets(m, n);
    const size_t begin = offsets[me] * element, bytes = (offsets[me + 1] - offsets[me]) * element;
    if (me <= 1) {
      CopyBytes(mine, piece, begin);
      CopyBytes(mine + begin + bytes, piece + begin + bytes, m * element - begin - bytes);
    } else {
      CopyBytes(mine, piece, m * element);
    }
    RETURN_IF_ERROR(comm.ArenaBarrier());
    ReduceSlotsInOrder(arena, half, me, type, op, piece + begin, begin, offsets[me + 1] - offsets[me]);
    if (op == ReduceOp::kAverage) Scale(type, piece + begin, offsets[me + 1] - offsets[me], n);
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
