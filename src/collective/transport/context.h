// Transport layer: how one rank moves bytes to and from the other ranks of a job.
// Algorithms (allreduce, ...) see only this interface; TCP and an in-process
// transport for tests plug in below it (the layering follows gloo/transport).
//
//   Device   - a kind of link plus its settings (TCP with socket options, in-process
//              hub); Connect() performs the rendezvous and returns a Context.
//   Context  - this rank's connections to every other rank of one communicator:
//              a full mesh of pairs. Messages between two ranks arrive in the order
//              they were posted; sends and receives are matched by order, and a
//              receive must have the size of the matching send.
//
// Contract of Context:
//  - PostSend/PostRecv queue a transfer and return at once. The caller keeps the
//    buffer alive and untouched until the Request completes. Zero-byte transfers
//    complete immediately and put nothing on the wire.
//  - Wait(req, deadline) drives every queued transfer (full duplex, all peers) until
//    req completes. It fails with
//      kTimeout  - the deadline passed; the message names the peers still pending;
//      kAborted  - a peer died, closed its side, or announced an abort (its reason is
//                  quoted); the message names that peer's rank.
//    After any failure the Context is broken for good: call Abort and rebuild.
//  - Abort(reason) tells every live peer "rank r gives up: reason" and closes all
//    links, so peers fail fast instead of waiting out their timeouts. Idempotent.
//  - Close() is the orderly goodbye after all requests completed. Peers that still
//    expect data from a closed rank get kAborted.
// Thread-safety: a Context is used by one thread at a time. Devices are thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "collective/rendezvous/store.h"
#include "collective/transport/shared_arena.h"
#include "collective/types.h"
#include "common/status.h"

namespace shoal::collective::transport {

// Names one posted transfer. seq == 0 means "already complete".
struct Request {
  int peer = -1;
  bool is_send = false;
  uint64_t seq = 0;
};

class Context {
 public:
  virtual ~Context() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // The host `rank` runs on, as far as this transport can tell: ranks with the same
  // number share memory. Hosts are numbered in the order of their lowest rank. A
  // transport that cannot tell gives every rank a host of its own.
  virtual int host(int rank) const { return rank; }
  // Memory shared by this rank and the others on its host, when there are some and
  // the transport can share it (shared_arena.h); null otherwise.
  virtual SharedArena* arena() { return nullptr; }

  virtual Request PostSend(int peer, const void* data, size_t bytes) = 0;
  virtual Request PostRecv(int peer, void* data, size_t bytes) = 0;
  virtual Status Wait(const Request& req, Deadline deadline) = 0;
  // Waits until every posted transfer of this rank completed.
  virtual Status WaitAll(Deadline deadline) = 0;

  virtual void Abort(const std::string& reason) = 0;
  virtual void Close() = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  // Joins the communicator of `size` ranks as `rank`, using `store` (already
  // prefixed for this job attempt) to find the other ranks.
  virtual Result<std::unique_ptr<Context>> Connect(int rank, int size, Store& store, Deadline deadline) = 0;
  virtual std::string name() const = 0;
};

}  // namespace shoal::collective::transport
