#include "collective/transport/shm/channel.h"

#include <algorithm>

#include "collective/reduce.h"

namespace shoal::collective::transport::shm {

size_t Channel::Write(const char* src, size_t bytes) {
  const uint64_t written = h_->written.load(std::memory_order_relaxed);  // only this side moves it
  const uint64_t read = h_->read.load(std::memory_order_acquire);        // the reader is done with [.., read)
  const size_t n = std::min<size_t>(bytes, capacity_ - static_cast<size_t>(written - read));
  if (n == 0) return 0;
  const size_t at = static_cast<size_t>(written % capacity_);
  const size_t first = std::min(n, capacity_ - at);
  CopyBytes(data_ + at, src, first);
  CopyBytes(data_, src + first, n - first);
  h_->written.store(written + n, std::memory_order_release);
  return n;
}

size_t Channel::Read(char* dst, size_t bytes) {
  const uint64_t read = h_->read.load(std::memory_order_relaxed);
  const uint64_t written = h_->written.load(std::memory_order_acquire);
  const size_t n = std::min<size_t>(bytes, static_cast<size_t>(written - read));
  if (n == 0) return 0;
  const size_t at = static_cast<size_t>(read % capacity_);
  const size_t first = std::min(n, capacity_ - at);
  CopyBytes(dst, data_ + at, first);
  CopyBytes(dst + first, data_, n - first);
  h_->read.store(read + n, std::memory_order_release);
  return n;
}

bool Channel::ArmReader() {
  h_->reader_asleep.store(1, std::memory_order_seq_cst);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return h_->written.load(std::memory_order_seq_cst) == h_->read.load(std::memory_order_relaxed);
}

bool Channel::ArmWriter() {
  h_->writer_asleep.store(1, std::memory_order_seq_cst);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return h_->written.load(std::memory_order_relaxed) - h_->read.load(std::memory_order_seq_cst) == capacity_;
}

bool Channel::TakeReaderAsleep() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return h_->reader_asleep.load(std::memory_order_seq_cst) != 0 && h_->reader_asleep.exchange(0) != 0;
}

bool Channel::TakeWriterAsleep() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return h_->writer_asleep.load(std::memory_order_seq_cst) != 0 && h_->writer_asleep.exchange(0) != 0;
}

}  // namespace shoal::collective::transport::shm
