#include "collective/recursive_doubling.h"

#include "collective/reduce.h"

namespace shoal::collective {

Status RecursiveDoublingAllreduce(Communicator& comm, void* data, size_t count, DataType type, ReduceOp op) {
  const int n = comm.size(), r = comm.rank();
  const size_t bytes = count * ElementSize(type);
  char* tmp = comm.Scratch(0, bytes);
  int p = 1;
  while (p * 2 <= n) p *= 2;
  const int extra = n - p;  // ranks [0, 2*extra) pair up: even ones sit out

  int folded;  // this rank's index among the p active ranks, or -1
  if (r < 2 * extra) {
    if (r % 2 == 0) {
      RETURN_IF_ERROR(comm.Wait(comm.PostSend(r + 1, data, bytes)));
      folded = -1;
    } else {
      RETURN_IF_ERROR(comm.Wait(comm.PostRecv(r - 1, tmp, bytes)));
      Reduce(type, op, data, tmp, count);
      folded = r / 2;
    }
  } else {
    folded = r - extra;
  }

  if (folded >= 0) {
    for (int mask = 1; mask < p; mask <<= 1) {
      const int partner_folded = folded ^ mask;
      const int partner = partner_folded < extra ? partner_folded * 2 + 1 : partner_folded + extra;
      RETURN_IF_ERROR(comm.SendRecv(partner, data, bytes, partner, tmp, bytes));
      Reduce(type, op, data, tmp, count);
    }
    if (op == ReduceOp::kAverage) Scale(type, data, count, n);
  }

  if (r < 2 * extra) {
    if (r % 2 == 0) {
      RETURN_IF_ERROR(comm.Wait(comm.PostRecv(r + 1, data, bytes)));
    } else {
      RETURN_IF_ERROR(comm.Wait(comm.PostSend(r - 1, data, bytes)));
    }
  }
  return Status::Ok();
}

}  // namespace shoal::collective
