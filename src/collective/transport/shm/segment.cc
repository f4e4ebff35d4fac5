#include "collective/transport/shm/segment.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "collective/transport/shm/fd_passing.h"

namespace shoal::collective::transport::shm {
namespace {

constexpr size_t kPage = kSegmentPage;
constexpr size_t kMaxSegmentBytes = size_t{128} << 20;
constexpr size_t kMaxChannelBytes = size_t{4} << 20;
constexpr size_t kMinChannelBytes = size_t{256} << 10;
static_assert(sizeof(ChannelHeader) <= kPage);

// One channel: its header on a page of its own, then its data.
size_t SlotBytes(size_t capacity) { return kPage + capacity; }

Result<tcp::Fd> MakeMemfd(size_t bytes) {
  tcp::Fd fd(memfd_create("shoal-collective", MFD_CLOEXEC));
  if (!fd.valid()) return Unavailable("memfd_create: " + tcp::ErrnoText(errno));
  if (ftruncate(fd.get(), static_cast<off_t>(bytes)) != 0)
    return Unavailable("sizing the shared segment to " + std::to_string(bytes) + " bytes: " + tcp::ErrnoText(errno));
  return fd;
}

// The leader: makes the memfd and hands it to every other local rank.
Result<tcp::Fd> Lead(int rank, const std::vector<int>& local, size_t bytes, Store& store, Deadline deadline) {
  ASSIGN_OR_RETURN(tcp::Fd memfd, MakeMemfd(bytes));
  std::string name;
  ASSIGN_OR_RETURN(tcp::Fd listener, ListenAbstract(&name));
  RETURN_IF_ERROR(store.Set("shm/" + std::to_string(rank), name));
  std::vector<bool> served(local.size(), false);
  served[0] = true;
  for (size_t i = 1; i < local.size(); ++i) {
    uint32_t tag = 0;
    auto accept = [&](uint32_t t) {
      auto it = std::find(local.begin(), local.end(), static_cast<int>(t));
      return it != local.end() && !served[it - local.begin()];
    };
    Status s = ServeFd(listener.get(), memfd.get(), deadline, accept, &tag);
    if (!s.ok()) {
      std::string missing;
      for (size_t k = 1; k < local.size(); ++k)
        if (!served[k]) missing += (missing.empty() ? "" : ", ") + std::to_string(local[k]);
      return s.WithContext("rank " + std::to_string(rank) + " sharing memory with local ranks [" + missing + "]");
    }
    served[std::find(local.begin(), local.end(), static_cast<int>(tag)) - local.begin()] = true;
  }
  return memfd;
}

Result<tcp::Fd> Follow(int rank, int leader, Store& store, Deadline deadline) {
  auto name = store.WaitGet("shm/" + std::to_string(leader), std::chrono::milliseconds(MillisLeft(deadline)));
  if (!name.ok()) return name.status().WithContext("rank " + std::to_string(rank) + " waiting for local rank " + std::to_string(leader) + "'s shared segment");
  auto fd = ReceiveFd(*name, static_cast<uint32_t>(rank), deadline);
  if (!fd.ok()) return fd.status().WithContext("rank " + std::to_string(rank) + " receiving the shared segment from rank " + std::to_string(leader));
  return fd;
}

}  // namespace

size_t Segment::ChannelCapacity(int local) {
  const size_t channels = static_cast<size_t>(std::max(1, local * (local - 1)));
  size_t capacity = kMaxChannelBytes;
  while (capacity > kMinChannelBytes && channels * SlotBytes(capacity) > kMaxSegmentBytes) capacity /= 2;
  return capacity;
}

Result<std::unique_ptr<Segment>> Segment::Share(int rank, const std::vector<int>& local_ranks, Store& store,
                                                Deadline deadline) {
  const int local = static_cast<int>(local_ranks.size());
  if (local < 2 || !std::is_sorted(local_ranks.begin(), local_ranks.end()) ||
      std::find(local_ranks.begin(), local_ranks.end(), rank) == local_ranks.end())
    return InvalidArgument("a shared segment needs two or more sorted local ranks including rank " + std::to_string(rank));
  const size_t capacity = ChannelCapacity(local);
  const size_t bytes = static_cast<size_t>(local) * (local - 1) * SlotBytes(capacity) + Arena::Bytes(local);
  auto fd = rank == local_ranks[0] ? Lead(rank, local_ranks, bytes, store, deadline)
                                   : Follow(rank, local_ranks[0], store, deadline);
  if (!fd.ok()) return fd.status();
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd->get(), 0);
  if (base == MAP_FAILED) return Unavailable("mapping the shared segment (" + std::to_string(bytes) + " bytes): " + tcp::ErrnoText(errno));
  return std::unique_ptr<Segment>(new Segment(local_ranks, static_cast<char*>(base), bytes, capacity));
}

Segment::Segment(std::vector<int> local_ranks, char* base, size_t bytes, size_t capacity)
    : local_ranks_(std::move(local_ranks)), base_(base), bytes_(bytes), capacity_(capacity) {}

Segment::~Segment() { munmap(base_, bytes_); }

int Segment::LocalIndex(int rank) const {
  return static_cast<int>(std::find(local_ranks_.begin(), local_ranks_.end(), rank) - local_ranks_.begin());
}

size_t Segment::ChannelsBytes() const {
  const size_t l = local_ranks_.size();
  return l * (l - 1) * SlotBytes(capacity_);
}

Arena Segment::arena() const {
  const int l = local_ranks();
  return Arena(base_ + ChannelsBytes(), l, Arena::SlotBytes(l));
}

bool Segment::Has(int rank) const { return LocalIndex(rank) < static_cast<int>(local_ranks_.size()); }

Channel Segment::ChannelFrom(int from_rank, int to_rank) const {
  const int l = static_cast<int>(local_ranks_.size());
  const int from = LocalIndex(from_rank), to = LocalIndex(to_rank);
  const size_t index = static_cast<size_t>(from) * (l - 1) + (to < from ? to : to - 1);
  char* slot = base_ + index * SlotBytes(capacity_);
  return Channel(reinterpret_cast<ChannelHeader*>(slot), slot + kPage, capacity_);
}

}  // namespace shoal::collective::transport::shm
