// Communicator: one rank's membership in a group of `size` ranks that run
// collective operations together (gloo's Context). The operations themselves are
// free functions in allreduce.h, reduce_scatter.h, allgather.h, broadcast.h and
// barrier.h; they take a Communicator&.
//
// Contract:
//  - Create() connects this rank to all others through a transport Device, using a
//    rendezvous Store that the caller has already prefixed for this job attempt.
//  - Every operation finishes within options.timeout or fails. On failure the
//    communicator tells every peer that it gives up (so they fail fast too) and is
//    broken from then on: later operations return kFailedPrecondition. The caller
//    then destroys it and builds a new one under a new store prefix (next attempt).
//    What each code means for the caller is in docs/collective.md.
//  - All ranks must call the same operations in the same order with matching
//    arguments (count, type, op, root).
// Ownership: owns its transport context and its scratch memory. The Device and
// the Store are used only during Create.
// Thread-safety: one thread at a time. Different communicators are independent.
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include "collective/transport/context.h"

namespace shoal::collective {

struct Options {
  // Deadline for each collective operation, measured from its start.
  std::chrono::milliseconds timeout{30000};
  // Deadline for Create (rendezvous plus connection setup).
  std::chrono::milliseconds connect_timeout{60000};
  // Allreduce of at most this many bytes uses recursive doubling (fewest steps);
  // larger ones use the pipelined ring (least data per rank).
  size_t small_allreduce_bytes = 64 << 10;
  // With every rank on one host, an allreduce of at most this many bytes reduces
  // straight from the other ranks' shared slots (single_host.h); 0 turns it off.
  size_t single_host_allreduce_bytes = size_t{1} << 30;
  // ...buffers of at most this many bytes with one barrier per piece, every rank
  // reading every slot (flat); larger ones split each piece among the ranks (two
  // barriers per piece).
  size_t flat_allreduce_bytes = 16 << 10;
  // The single-host allreduce works in pieces of at most this many bytes (and at
  // most the arena's slot), so that a piece is still in cache when it is read back.
  size_t single_host_piece_bytes = 512 << 10;
  // Ring and chain pipelines move data in chunks of at most this size (the ring
  // uses smaller ones, down to 256 KiB, when a segment would have fewer than 4)...
  size_t chunk_bytes = 1 << 20;
  // ...with this many chunks received ahead of the one being reduced.
  int pipeline_depth = 4;
};

class Communicator {
 public:
  static Result<std::unique_ptr<Communicator>> Create(transport::Device& device, Store& store, int rank, int size,
                                                      Options options = {});
  ~Communicator();

  int rank() const { return transport_->rank(); }
  int size() const { return transport_->size(); }
  // The host of `rank` as the transport sees it (see transport/context.h).
  int host(int r) const { return transport_->host(r); }
  const Options& options() const { return options_; }
  // OK while usable; otherwise the error that broke it.
  const Status& broken() const { return broken_; }
  // Orderly goodbye (also done by the destructor).
  void Close();

  // --- For the implementations of the operations -------------------------------
  // Runs `body` as operation `name` over `bytes` bytes: checks the communicator is
  // usable, sets the deadline, waits for all sends, and on failure breaks the
  // communicator and aborts the peers. Returns body's error with context added.
  Status Run(const char* name, size_t bytes, const std::function<Status()>& body);
  // Transfers within Run; Wait uses the running operation's deadline.
  transport::Request PostSend(int peer, const void* data, size_t bytes) {
    return transport_->PostSend(peer, data, bytes);
  }
  transport::Request PostRecv(int peer, void* data, size_t bytes) { return transport_->PostRecv(peer, data, bytes); }
  Status Wait(const transport::Request& req) { return transport_->Wait(req, deadline_); }
  // Sends to one peer while receiving from another (or the same), then waits for both.
  Status SendRecv(int to, const void* send, size_t send_bytes, int from, void* recv, size_t recv_bytes);
  // Memory shared with the other ranks of this host, else null (transport/shared_arena.h),
  // and its barrier under the running operation's deadline.
  transport::SharedArena* arena() { return transport_->arena(); }
  Status ArenaBarrier() { return transport_->arena()->Barrier(deadline_); }
  // Whether every rank shares this rank's arena (the same answer on every rank).
  bool AllRanksShareTheArena() { return arena() && arena()->local_size() == size(); }
  // Scratch memory owned by the communicator; slot 0 and 1 are independent.
  // The pointer stays valid until the next Scratch call for the same slot.
  char* Scratch(int slot, size_t bytes);

 private:
  Communicator(std::unique_ptr<transport::Context> transport, Options options);

  std::unique_ptr<transport::Context> transport_;
  const Options options_;
  Deadline deadline_{};
  Status broken_;
  struct Buffer {
    std::unique_ptr<char[]> data;
    size_t size = 0;
  };
  Buffer scratch_[2];
};

}  // namespace shoal::collective
