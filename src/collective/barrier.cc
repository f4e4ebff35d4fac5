#include "collective/barrier.h"

namespace shoal::collective {

Status Barrier(Communicator& comm) {
  return comm.Run("barrier", 0, [&]() -> Status {
    const int n = comm.size(), r = comm.rank();
    static const char kToken = 1;
    char got = 0;
    for (int dist = 1; dist < n; dist <<= 1)
      RETURN_IF_ERROR(comm.SendRecv((r + dist) % n, &kToken, 1, (r - dist + n) % n, &got, 1));
    return Status::Ok();
  });
}

}  // namespace shoal::collective
