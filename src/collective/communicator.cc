#include "collective/communicator.h"

namespace shoal::collective {

Result<std::unique_ptr<Communicator>> Communicator::Create(transport::Device& device, Store& store, int rank,
                                                           int size, Options options) {
  if (options.chunk_bytes < 64 || options.pipeline_depth < 1)
    return InvalidArgument("collective options need chunk_bytes >= 64 and pipeline_depth >= 1");
  auto ctx = device.Connect(rank, size, store, Clock::now() + options.connect_timeout);
  if (!ctx.ok()) return ctx.status().WithContext("building the " + device.name() + " communicator");
  return std::unique_ptr<Communicator>(new Communicator(std::move(*ctx), options));
}

Communicator::Communicator(std::unique_ptr<transport::Context> transport, Options options)
    : transport_(std::move(transport)), options_(options) {}

Communicator::~Communicator() { Close(); }

void Communicator::Close() { transport_->Close(); }

Status Communicator::Run(const char* name, size_t bytes, const std::function<Status()>& body) {
  // Built only for an error: small operations take a few microseconds in all.
  auto what = [&] {
    return std::string(name) + " of " + std::to_string(bytes) + " bytes on rank " + std::to_string(rank()) + "/" +
           std::to_string(size());
  };
  if (!broken_.ok())
    return FailedPrecondition(what() + " refused: the communicator is broken (" + broken_.message() +
                              "); rebuild it for the next attempt");
  deadline_ = Clock::now() + options_.timeout;
  Status s = body();
  if (s.ok()) s = transport_->WaitAll(deadline_);  // the caller may reuse its buffers now
  if (s.ok()) return s;
  if (s.code() == StatusCode::kTimeout)
    s = Timeout(s.message() + " (timeout " + std::to_string(options_.timeout.count()) + " ms)");
  broken_ = s.WithContext(what());
  transport_->Abort("rank " + std::to_string(rank()) + " failed " + name + ": " + s.message());
  return broken_;
}

Status Communicator::SendRecv(int to, const void* send, size_t send_bytes, int from, void* recv,
                              size_t recv_bytes) {
  transport::Request s = PostSend(to, send, send_bytes);
  transport::Request r = PostRecv(from, recv, recv_bytes);
  RETURN_IF_ERROR(Wait(r));
  return Wait(s);
}

char* Communicator::Scratch(int slot, size_t bytes) {
  Buffer& b = scratch_[slot];
  if (b.size < bytes) {
    b.data.reset(new char[bytes]);
    b.size = bytes;
  }
  return b.data.get();
}

}  // namespace shoal::collective
