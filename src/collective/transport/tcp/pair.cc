#include "collective/transport/tcp/pair.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace shoal::collective::transport::tcp {
namespace {

constexpr char kGoodbye = 'G';
constexpr char kAbort = 'A';
constexpr char kProbe = 'P';
constexpr char kProbeAnswer = 'R';
// Upper bound for SO_RCVLOWAT: well below any receive buffer we run with.
constexpr size_t kMaxLowWatermark = 512 << 10;

}  // namespace

Pair::Pair(int self, int peer, Fd control, std::vector<Fd> data, size_t stripe_min, std::unique_ptr<ShmLink> shm)
    : self_(self), peer_(peer), stripe_min_(stripe_min), control_(std::move(control)), shm_(std::move(shm)) {
  for (auto& fd : data) data_.push_back(Socket{std::move(fd), {}, {}});
}

uint64_t Pair::Post(TransferQueue Socket::*stream, char* data, size_t bytes) {
  const size_t k = (bytes >= stripe_min_ && data_.size() > 1) ? data_.size() : 1;
  for (size_t i = 0; i < data_.size(); ++i) {
    size_t begin = i < k ? bytes * i / k : bytes;
    size_t end = i < k ? bytes * (i + 1) / k : bytes;
    (data_[i].*stream).Post(data + begin, end - begin);
  }
  return stream == &Socket::send ? ++sends_posted_ : ++recvs_posted_;
}

uint64_t Pair::PostSend(const void* data, size_t bytes) {
  if (shm_) return shm_->PostSend(data, bytes);
  return Post(&Socket::send, const_cast<char*>(static_cast<const char*>(data)), bytes);
}

uint64_t Pair::PostRecv(void* data, size_t bytes) {
  if (shm_) return shm_->PostRecv(data, bytes);
  return Post(&Socket::recv, static_cast<char*>(data), bytes);
}

bool Pair::Done(TransferQueue Socket::*stream, uint64_t seq) const {
  for (const auto& s : data_)
    if ((s.*stream).done < seq) return false;
  return true;
}

bool Pair::idle() const {
  if (shm_) return shm_->idle();
  for (const auto& s : data_)
    if (!s.send.queue.empty() || !s.recv.queue.empty()) return false;
  return true;
}

Status Pair::Progress(bool* progressed) {
  if (shm_) {
    bool moved = false, wake_peer = false;
    shm_->Progress(&moved, &wake_peer);
    if (wake_peer) RingDoorbell();
    *progressed |= moved;
    // The peer wrote all it ever will before its goodbye: what cannot move now never will.
    if (!moved && goodbye_ && !shm_->idle())
      return Aborted("rank " + std::to_string(peer_) + " closed its communicator while rank " + std::to_string(self_) +
                     " still had transfers with it (" + PendingText() + ")");
    return Status::Ok();
  }
  for (auto& s : data_) {
    // Sends first: the peer may be waiting for them before it sends to us.
    RETURN_IF_ERROR(Drain(s.fd.get(), /*is_send=*/true, &s.send, progressed));
    RETURN_IF_ERROR(Drain(s.fd.get(), /*is_send=*/false, &s.recv, progressed));
  }
  return Status::Ok();
}

Status Pair::Drain(int fd, bool is_send, TransferQueue* stream, bool* progressed) {
  while (!stream->queue.empty()) {
    Transfer& op = stream->queue.front();
    while (op.left > 0) {
      ssize_t n = is_send ? ::send(fd, op.ptr, op.left, MSG_NOSIGNAL | MSG_DONTWAIT)
                          : ::recv(fd, op.ptr, op.left, MSG_DONTWAIT);
      if (n > 0) {
        op.ptr += n;
        op.left -= static_cast<size_t>(n);
        *progressed = true;
      } else if (n == 0) {
        return PeerLost("connection closed while " + std::to_string(op.left) + " more bytes were expected");
      } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
        return Status::Ok();  // socket buffer full (send) or empty (recv)
      } else if (errno != EINTR) {
        return PeerLost(std::string(is_send ? "send" : "recv") + " failed: " + ErrnoText(errno));
      }
    }
    stream->CompleteFront();
  }
  return Status::Ok();
}

void Pair::RingDoorbell() {
  static constexpr char kWake = 'W';
  // A full socket buffer already holds wake-ups; a closed one shows on the control socket.
  if (!data_.empty() && data_[0].fd.valid()) (void)::send(data_[0].fd.get(), &kWake, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
}

void Pair::DrainDoorbell() {
  if (!shm_ || doorbell_eof_ || data_.empty() || !data_[0].fd.valid()) return;
  char buf[256];
  while (true) {
    ssize_t n = ::recv(data_[0].fd.get(), buf, sizeof(buf), MSG_DONTWAIT);
    if (n > 0) continue;
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) doorbell_eof_ = true;
    return;
  }
}

size_t Pair::PreparePoll(std::vector<pollfd>* fds, bool doorbell) {
  size_t added = 0;
  if (!control_eof_ && control_.valid()) {
    fds->push_back(pollfd{control_.get(), POLLIN, 0});
    ++added;
  }
  if (shm_) {
    if ((doorbell || !shm_->idle()) && !doorbell_eof_ && !data_.empty()) {
      fds->push_back(pollfd{data_[0].fd.get(), POLLIN, 0});
      ++added;
    }
    return added;
  }
  for (auto& s : data_) {
    short events = 0;
    if (!s.send.queue.empty()) events |= POLLOUT;
    if (!s.recv.queue.empty()) {
      events |= POLLIN;
      const int want = static_cast<int>(std::min<size_t>(s.recv.queue.front().left, kMaxLowWatermark));
      if (want > 0 && want != s.rcvlowat &&
          setsockopt(s.fd.get(), SOL_SOCKET, SO_RCVLOWAT, &want, sizeof(want)) == 0)
        s.rcvlowat = want;
    }
    if (events) {
      fds->push_back(pollfd{s.fd.get(), events, 0});
      ++added;
    }
  }
  return added;
}

Status Pair::ReadControl() {
  DrainDoorbell();
  if (control_eof_ || !control_.valid()) return Status::Ok();
  char buf[4096];
  while (true) {
    ssize_t n = ::recv(control_.get(), buf, sizeof(buf), MSG_DONTWAIT);
    if (n > 0) {
      control_in_.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) control_eof_ = true;
    break;
  }
  // Parse complete control messages.
  while (!control_in_.empty()) {
    if (control_in_[0] == kGoodbye || control_in_[0] == kProbe || control_in_[0] == kProbeAnswer) {
      if (control_in_[0] == kGoodbye) goodbye_ = true;
      if (control_in_[0] == kProbeAnswer) answered_probe_ = true;
      if (control_in_[0] == kProbe) (void)::send(control_.get(), &kProbeAnswer, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      control_in_.erase(0, 1);
    } else if (control_in_[0] == kAbort) {
      uint32_t len = 0;
      if (control_in_.size() < 1 + sizeof(len)) break;
      std::memcpy(&len, control_in_.data() + 1, sizeof(len));
      if (control_in_.size() < 1 + sizeof(len) + len) break;
      abort_reason_ = control_in_.substr(1 + sizeof(len), len);
      control_in_.erase(0, 1 + sizeof(len) + len);
    } else {
      control_in_.clear();
      abort_reason_ = "garbage on the control connection";
    }
  }
  if (!abort_reason_.empty()) return Aborted("rank " + std::to_string(peer_) + " aborted: " + abort_reason_);
  if (control_eof_ && !goodbye_)
    return Aborted("lost rank " + std::to_string(peer_) +
                   ": its connection closed without a goodbye (the process exited, crashed or was killed)");
  return Status::Ok();
}

Status Pair::PeerLost(const std::string& detail) {
  Status control = ReadControl();
  if (!control.ok()) return control;
  if (goodbye_)
    return Aborted("rank " + std::to_string(peer_) + " closed its communicator while rank " +
                   std::to_string(self_) + " still had transfers with it (" + detail + ")");
  return Aborted("lost rank " + std::to_string(peer_) + ": " + detail);
}

std::string Pair::PendingText() const {
  size_t send_bytes = shm_ ? shm_->pending_send_bytes() : 0, recv_bytes = shm_ ? shm_->pending_recv_bytes() : 0;
  for (const auto& s : data_) {
    send_bytes += s.send.pending_bytes();
    recv_bytes += s.recv.pending_bytes();
  }
  std::string out;
  if (recv_bytes || send_bytes == 0) out += "receiving " + std::to_string(recv_bytes) + " bytes";
  if (send_bytes) out += std::string(out.empty() ? "" : ", ") + "sending " + std::to_string(send_bytes) + " bytes";
  return out;
}

void Pair::SendGoodbye() {
  if (control_.valid()) (void)::send(control_.get(), &kGoodbye, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
}

void Pair::SendProbe() {
  answered_probe_ = false;
  if (control_.valid()) (void)::send(control_.get(), &kProbe, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
}

void Pair::SendAbort(const std::string& reason) {
  if (!control_.valid()) return;
  std::string msg(1, kAbort);
  uint32_t len = static_cast<uint32_t>(std::min<size_t>(reason.size(), 2048));
  msg.append(reinterpret_cast<const char*>(&len), sizeof(len));
  msg.append(reason, 0, len);
  (void)::send(control_.get(), msg.data(), msg.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

void Pair::CloseAll() {
  for (auto& s : data_) {
    if (s.fd.valid()) ::shutdown(s.fd.get(), SHUT_RDWR);
    s.fd.Reset();
    s.send.queue.clear();
    s.recv.queue.clear();
  }
  if (shm_) shm_->Clear();
  control_.Reset();
}

}  // namespace shoal::collective::transport::tcp
