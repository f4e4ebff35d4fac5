#include "collective/transport/tcp/shm_link.h"

namespace shoal::collective::transport::tcp {

uint64_t ShmLink::PostSend(const void* data, size_t bytes) {
  send_.Post(const_cast<char*>(static_cast<const char*>(data)), bytes);
  return ++sends_posted_;
}

uint64_t ShmLink::PostRecv(void* data, size_t bytes) {
  recv_.Post(static_cast<char*>(data), bytes);
  return ++recvs_posted_;
}

namespace {

// Moves the queued transfers through `move` (a channel's Write or Read) until the
// queue is empty or the channel takes or gives nothing more; true if a byte moved.
template <typename MoveFn>
bool Drain(TransferQueue& transfers, MoveFn move) {
  bool moved = false;
  while (!transfers.queue.empty()) {
    Transfer& t = transfers.queue.front();
    const size_t n = t.left ? move(t.ptr, t.left) : 0;
    t.ptr += n;
    t.left -= n;
    moved |= n > 0;
    if (t.left > 0) break;  // the channel is full (send) or empty (receive)
    transfers.CompleteFront();
  }
  return moved;
}

}  // namespace

void ShmLink::Progress(bool* progressed, bool* wake_peer) {
  const bool wrote = Drain(send_, [&](char* p, size_t n) { return out_.Write(p, n); });
  const bool read = Drain(recv_, [&](char* p, size_t n) { return in_.Read(p, n); });
  *progressed |= wrote || read;
  if ((wrote && out_.TakeReaderAsleep()) || (read && in_.TakeWriterAsleep())) *wake_peer = true;
}

bool ShmLink::ArmForSleep() {
  bool may_sleep = true;
  if (!send_.queue.empty() && !out_.ArmWriter()) may_sleep = false;
  if (!recv_.queue.empty() && !in_.ArmReader()) may_sleep = false;
  return may_sleep;
}

void ShmLink::Clear() {
  send_.queue.clear();
  recv_.queue.clear();
}

}  // namespace shoal::collective::transport::tcp
