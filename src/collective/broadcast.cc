#include "collective/broadcast.h"

#include <algorithm>
#include <vector>

namespace shoal::collective {
namespace {

// Ranks are renumbered so the root is 0: real = (virt + root) % n.
Status BinomialTree(Communicator& comm, char* data, size_t bytes, int root) {
  const int n = comm.size();
  const int virt = (comm.rank() - root + n) % n;
  int mask = 1;
  for (; mask < n; mask <<= 1) {
    if (virt & mask) {
      RETURN_IF_ERROR(comm.Wait(comm.PostRecv((virt - mask + root) % n, data, bytes)));
      break;
    }
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (virt + mask < n) comm.PostSend((virt + mask + root) % n, data, bytes);
  }
  return Status::Ok();  // Run waits for the sends
}

Status Chain(Communicator& comm, char* data, size_t bytes, int root) {
  const int n = comm.size();
  const int virt = (comm.rank() - root + n) % n;
  const int prev = (comm.rank() - 1 + n) % n, next = (comm.rank() + 1) % n;
  const size_t chunk = comm.options().chunk_bytes;
  const size_t chunks = (bytes + chunk - 1) / chunk;
  std::vector<transport::Request> recvs(chunks);
  if (virt != 0)
    for (size_t c = 0; c < chunks; ++c) recvs[c] = comm.PostRecv(prev, data + c * chunk, std::min(chunk, bytes - c * chunk));
  for (size_t c = 0; c < chunks; ++c) {
    if (virt != 0) RETURN_IF_ERROR(comm.Wait(recvs[c]));
    if (virt != n - 1) comm.PostSend(next, data + c * chunk, std::min(chunk, bytes - c * chunk));
  }
  return Status::Ok();
}

}  // namespace

Status Broadcast(Communicator& comm, void* data, size_t count, DataType type, int root) {
  const size_t bytes = count * ElementSize(type);
  return comm.Run("broadcast", bytes, [&]() -> Status {
    if (root < 0 || root >= comm.size())
      return InvalidArgument("broadcast root " + std::to_string(root) + " is not a rank of " +
                             std::to_string(comm.size()));
    if (comm.size() == 1 || bytes == 0) return Status::Ok();
    char* p = static_cast<char*>(data);
    return bytes <= comm.options().small_allreduce_bytes ? BinomialTree(comm, p, bytes, root)
                                                         : Chain(comm, p, bytes, root);
  });
}

}  // namespace shoal::collective
