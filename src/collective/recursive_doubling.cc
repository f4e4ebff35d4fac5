#include "collective/recursive_doubling.h"

#include <algorithm>

#include "collective/reduce.h"

namespace shoal::collective {

namespace {

// Recursive doubling among `n` ranks where rank_of(i) is the i-th, this one the r-th.
template <typename RankOf>
Status RecursiveDoubling(Communicator& comm, int n, int r, RankOf rank_of, void* data, size_t count, DataType type,
                         ReduceOp op) {
  const size_t bytes = count * ElementSize(type);
  char* tmp = comm.Scratch(0, bytes);
  int p = 1;
  while (p * 2 <= n) p *= 2;
  const int extra = n - p;  // ranks [0, 2*extra) pair up: even ones sit out

  int folded;  // this rank's index among the p active ranks, or -1
  if (r < 2 * extra) {
    if (r % 2 == 0) {
      RETURN_IF_ERROR(comm.Wait(comm.PostSend(rank_of(r + 1), data, bytes)));
      folded = -1;
    } else {
      RETURN_IF_ERROR(comm.Wait(comm.PostRecv(rank_of(r - 1), tmp, bytes)));
      Reduce(type, op, data, tmp, count);
      folded = r / 2;
    }
  } else {
    folded = r - extra;
  }

  if (folded >= 0) {
    for (int mask = 1; mask < p; mask <<= 1) {
      const int partner_folded = folded ^ mask;
      const int partner = rank_of(partner_folded < extra ? partner_folded * 2 + 1 : partner_folded + extra);
      RETURN_IF_ERROR(comm.SendRecv(partner, data, bytes, partner, tmp, bytes));
      Reduce(type, op, data, tmp, count);
    }
    if (op == ReduceOp::kAverage) Scale(type, data, count, comm.size());
  }

  if (r < 2 * extra) {
    if (r % 2 == 0) {
      RETURN_IF_ERROR(comm.Wait(comm.PostRecv(rank_of(r + 1), data, bytes)));
    } else {
      RETURN_IF_ERROR(comm.Wait(comm.PostSend(rank_of(r - 1), data, bytes)));
    }
  }
  return Status::Ok();
}

}  // namespace

Status RecursiveDoublingAllreduce(Communicator& comm, void* data, size_t count, DataType type, ReduceOp op) {
  return RecursiveDoubling(comm, comm.size(), comm.rank(), [](int i) { return i; }, data, count, type, op);
}

Status RecursiveDoublingAmong(Communicator& comm, const std::vector<int>& group, void* data, size_t count,
                              DataType type, ReduceOp op) {
  const int me = static_cast<int>(std::find(group.begin(), group.end(), comm.rank()) - group.begin());
  return RecursiveDoubling(comm, static_cast<int>(group.size()), me, [&](int i) { return group[i]; }, data, count,
                           type, op);
}

}  // namespace shoal::collective
