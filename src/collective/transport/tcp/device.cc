#include "collective/transport/tcp/device.h"

#include <algorithm>
#include <thread>

#include "collective/transport/shm/host_identity.h"
#include "collective/transport/tcp/context.h"

namespace shoal::collective::transport::tcp {
namespace {

constexpr uint32_t kHelloMagic = 0x53484f4c;  // "SHOL"

// First bytes on every connection: who is calling and which socket this is.
struct Hello {
  uint32_t magic;
  int32_t rank;
  int32_t size;
  int32_t index;  // 0 = control, 1.. = data
};

Spin SpinFor(const Options& o, int size, int shared_memory_ranks) {
  int local = o.local_ranks > 0 ? o.local_ranks : size;
  if (shared_memory_ranks > 1) local = shared_memory_ranks;
  const bool own_cores = local <= static_cast<int>(std::thread::hardware_concurrency());
  Spin spin;
  // Spinning yields the CPU on every turn, so even ranks that share cores may spin
  // briefly: a waiting rank then runs again as soon as its peer has sent, instead
  // of paying a sleep and a wake-up per message. Measured on 4 ranks / 2 cores:
  // 20 us halves the latency of small allreduces; 100 us slows large ones.
  spin.total = std::chrono::microseconds(o.spin_us >= 0 ? o.spin_us : own_cores ? 50 : 20);
  // Ranks with cores of their own first poll shared memory without system calls.
  spin.poll_only = std::chrono::microseconds(own_cores && shared_memory_ranks > 1 ? 5 : 0);
  return spin;
}

// The host of every rank, numbered in the order of each host's lowest rank.
Result<std::vector<int>> HostsOfRanks(int rank, int size, const std::string& host_name, Store& store, Deadline deadline) {
  const std::string me = shm::HostIdentity(host_name);
  RETURN_IF_ERROR(store.Set("host/" + std::to_string(rank), me));
  std::vector<std::string> identities;
  std::vector<int> hosts;
  for (int peer = 0; peer < size; ++peer) {
    std::string identity = me;
    if (peer != rank) {
      auto host = store.WaitGet("host/" + std::to_string(peer), std::chrono::milliseconds(MillisLeft(deadline)));
      if (!host.ok()) return host.status().WithContext("rank " + std::to_string(rank) + " looking up rank " + std::to_string(peer) + "'s host");
      identity = *host;
    }
    auto it = std::find(identities.begin(), identities.end(), identity);
    hosts.push_back(static_cast<int>(it - identities.begin()));
    if (it == identities.end()) identities.push_back(identity);
  }
  return hosts;
}

}  // namespace

Result<std::unique_ptr<transport::Context>> Device::Connect(int rank, int size, Store& store, Deadline deadline) {
  if (size < 1 || rank < 0 || rank >= size)
    return InvalidArgument("rank " + std::to_string(rank) + " is outside a world of size " + std::to_string(size));
  const int per_pair = std::max(1, options_.connections_per_pair);
  const int sockets_per_pair = per_pair + 1;

  int port = 0;
  ASSIGN_OR_RETURN(Fd listener, Listen(options_.host, options_.socket, &port));
  std::string host = options_.host.find(':') != std::string::npos ? "[" + options_.host + "]" : options_.host;
  RETURN_IF_ERROR(store.Set("tcp/" + std::to_string(rank), host + ":" + std::to_string(port)));

  // sockets[peer][index]
  std::vector<std::vector<Fd>> sockets(size);
  for (auto& v : sockets) v.resize(sockets_per_pair);

  // Connect to lower ranks; higher ranks connect to us.
  for (int peer = 0; peer < rank; ++peer) {
    const std::string key = "tcp/" + std::to_string(peer);
    auto address = store.WaitGet(key, std::chrono::milliseconds(MillisLeft(deadline)));
    if (!address.ok()) return address.status().WithContext("rank " + std::to_string(rank) + " looking up rank " + std::to_string(peer));
    for (int index = 0; index < sockets_per_pair; ++index) {
      auto fd = tcp::Connect(*address, options_.socket, deadline);
      if (!fd.ok()) return fd.status().WithContext("rank " + std::to_string(rank) + " connecting to rank " + std::to_string(peer));
      Hello hello{kHelloMagic, rank, size, index};
      RETURN_IF_ERROR(WriteFully(fd->get(), &hello, sizeof(hello), deadline));
      sockets[peer][index] = std::move(*fd);
    }
  }
  for (int expected = (size - 1 - rank) * sockets_per_pair; expected > 0; --expected) {
    auto fd = Accept(listener.get(), deadline);
    if (!fd.ok()) {
      std::string missing;
      for (int peer = rank + 1; peer < size; ++peer)
        if (!sockets[peer][sockets_per_pair - 1].valid()) missing += (missing.empty() ? "" : ", ") + std::to_string(peer);
      return fd.status().WithContext("rank " + std::to_string(rank) + " waiting for ranks [" + missing + "] to connect");
    }
    Hello hello{};
    RETURN_IF_ERROR(ReadFully(fd->get(), &hello, sizeof(hello), deadline));
    if (hello.magic != kHelloMagic || hello.size != size || hello.rank <= rank || hello.rank >= size ||
        hello.index < 0 || hello.index >= sockets_per_pair || sockets[hello.rank][hello.index].valid())
      return Unavailable("rank " + std::to_string(rank) + " got an unexpected connection (rank " +
                         std::to_string(hello.rank) + ", size " + std::to_string(hello.size) +
                         "); is another job attempt using the same rendezvous prefix?");
    sockets[hello.rank][hello.index] = std::move(*fd);
  }

  std::unique_ptr<shm::Segment> segment;
  std::vector<int> hosts;
  if (options_.shared_memory && size > 1) {
    ASSIGN_OR_RETURN(hosts, HostsOfRanks(rank, size, options_.host_name, store, deadline));
    std::vector<int> local;
    for (int r = 0; r < size; ++r)
      if (hosts[r] == hosts[rank]) local.push_back(r);
    if (local.size() > 1) {
      ASSIGN_OR_RETURN(segment, shm::Segment::Share(rank, local, store, deadline));
    }
  }

  std::vector<std::unique_ptr<Pair>> pairs(size);
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank) continue;
    for (auto& fd : sockets[peer]) RETURN_IF_ERROR(MakeDataSocket(fd.get()));
    Fd control = std::move(sockets[peer][0]);
    std::vector<Fd> data;
    for (int i = 1; i < sockets_per_pair; ++i) data.push_back(std::move(sockets[peer][i]));
    std::unique_ptr<ShmLink> link;
    if (segment && segment->Has(peer))
      link = std::make_unique<ShmLink>(segment->ChannelFrom(rank, peer), segment->ChannelFrom(peer, rank));
    pairs[peer] = std::make_unique<Pair>(rank, peer, std::move(control), std::move(data), options_.stripe_min_bytes,
                                         std::move(link));
  }
  return std::unique_ptr<transport::Context>(
      std::make_unique<tcp::Context>(rank, size, std::move(pairs), SpinFor(options_, size, segment ? segment->local_ranks() : 0), std::move(segment), std::move(hosts)));
}

}  // namespace shoal::collective::transport::tcp
