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

void ShmLink::Progress(bool* progressed, bool* wake_peer) {
  bool wrote = false, read = false;
  while (!send_.queue.empty()) {
    Transfer& t = send_.queue.front();
    const size_t n = t.left ? out_.Write(t.ptr, t.left) : 0;
    t.ptr += n;
    t.left -= n;
    wrote |= n > 0;
    if (t.left > 0) break;  // the channel is full
    send_.CompleteFront();
  }
  while (!recv_.queue.empty()) {
    Transfer& t = recv_.queue.front();
    const size_t n = t.left ? in_.Read(t.ptr, t.left) : 0;
    t.ptr += n;
    t.left -= n;
    read |= n > 0;
    if (t.left > 0) break;  // nothing more has arrived
    recv_.CompleteFront();
  }
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
