// shm::Channel: a one-way byte stream between two processes through shared memory,
// a single-producer single-consumer ring (the shared-memory analogue of one
// direction of a socket).
//
// Layout in the shared segment: a ChannelHeader (the writer's and the reader's
// positions on separate cache lines, plus two "asleep" flags), then `capacity` bytes
// of data. Positions count bytes since the channel was made and never wrap; the
// data index is position % capacity.
//
// Contract:
//  - Exactly one process writes and one reads. Write and Read copy what fits or what
//    is there, never block, and return the byte count (possibly 0).
//  - Sleeping: a reader that found nothing calls ArmReader(); it returns true when it
//    may sleep (still nothing to read, and its flag is up). A writer calls
//    TakeReaderAsleep() after each Write that moved bytes; true means the reader may
//    be asleep and must be woken (the owner rings its doorbell). The same pair of
//    calls exists for a writer waiting for space. Sequentially consistent fences on
//    both sides make the lost wake-up impossible: either the sleeper sees the new
//    data, or the waker sees the flag.
// Ownership: views memory owned by a shm::Segment.
// Thread-safety: one writer thread and one reader thread (in different processes).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace shoal::collective::transport::shm {

struct ChannelHeader {
  alignas(64) std::atomic<uint64_t> written;
  alignas(64) std::atomic<uint64_t> read;
  alignas(64) std::atomic<uint32_t> reader_asleep;
  alignas(64) std::atomic<uint32_t> writer_asleep;
};
static_assert(std::atomic<uint64_t>::is_always_lock_free && std::atomic<uint32_t>::is_always_lock_free,
              "channel positions must be lock-free to live in shared memory");

class Channel {
 public:
  Channel() = default;
  // `header` is followed by no particular memory; `data` holds `capacity` bytes.
  Channel(ChannelHeader* header, char* data, size_t capacity) : h_(header), data_(data), capacity_(capacity) {}

  size_t Write(const char* src, size_t bytes);
  size_t Read(char* dst, size_t bytes);

  bool ArmReader();
  bool ArmWriter();
  bool TakeReaderAsleep();
  bool TakeWriterAsleep();

 private:
  ChannelHeader* h_ = nullptr;
  char* data_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace shoal::collective::transport::shm
