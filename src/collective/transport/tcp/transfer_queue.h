// TransferQueue: the posted transfers of one direction of one link, in order, and
// how many of them completed (a transfer's sequence number is its position).
// Shared by the socket and the shared-memory data paths of a tcp::Pair.
// Thread-safety: none; owned by one Pair.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>

namespace shoal::collective::transport::tcp {

struct Transfer {
  char* ptr;
  size_t left;
};

struct TransferQueue {
  std::deque<Transfer> queue;
  uint64_t done = 0;  // transfers fully moved

  // An empty transfer with nothing ahead of it completes at once.
  void Post(char* data, size_t bytes) {
    if (bytes == 0 && queue.empty()) {
      ++done;
    } else {
      queue.push_back(Transfer{data, bytes});
    }
  }
  void CompleteFront() {
    queue.pop_front();
    ++done;
  }
  size_t pending_bytes() const {
    size_t n = 0;
    for (const auto& t : queue) n += t.left;
    return n;
  }
};

}  // namespace shoal::collective::transport::tcp
