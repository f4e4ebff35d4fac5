#include "common/connection_gate.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/json.h"
#include "common/log.h"

namespace shoal {
namespace {

constexpr std::chrono::milliseconds kSweepInterval{100};
constexpr size_t kReadChunk = 64 * 1024;

void AddressOf(const sockaddr_storage& addr, std::string& ip, int& port) {
  char text[INET6_ADDRSTRLEN] = "";
  if (addr.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text);
    port = ntohs(v4->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text);
    port = ntohs(v6->sin6_port);
  }
  ip = text;
}

const char* ReasonPhrase(int status) {
  switch (status) {
    case 400: return "Bad Request";
    case 408: return "Request Timeout";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 431: return "Request Header Fields Too Large";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Error";
  }
}

Status StatusForRefusal(int http_status, const std::string& reason) {
  switch (http_status) {
    case 408: return Timeout(reason);
    case 413:
    case 431: return ResourceExhausted(reason);
    case 503: return Unavailable(reason);
    default: return InvalidArgument(reason);
  }
}

// Best effort: the socket is non-blocking and the connection is about to close, so a
// client that does not read gets less than the whole answer.
void SendAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace

GateConnection::GateConnection(ConnectionGate& gate, int fd) : gate_(gate), fd_(fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) AddressOf(addr, peer_address_, peer_port_);
  len = sizeof addr;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) AddressOf(addr, local_address_, local_port_);
}

GateConnection::~GateConnection() {
  close(fd_);
  if (counted_) gate_.Released(peer_address_);
}

void GateConnection::ConsumeRequest() {
  buffer_.erase(0, request_.total_size);
  request_ = FramedRequest{};
  served_params_.clear();
}

ConnectionGate::ConnectionGate(GateLimits limits, Dispatch dispatch)
    : limits_(std::move(limits)), dispatch_(std::move(dispatch)) {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = wake_fd_;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &event);
  loop_ = std::thread([this] { Loop(); });
}

ConnectionGate::~ConnectionGate() {
  Stop();
  close(wake_fd_);
  close(epoll_fd_);
}

void ConnectionGate::Stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof one);
  if (loop_.joinable()) loop_.join();
}

GateStats ConnectionGate::Stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void ConnectionGate::PostToLoop(std::function<void()> work) {
  bool first;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;  // the work's captures (a connection) are released here
    first = inbox_.empty();
    inbox_.push_back(std::move(work));
  }
  // The loop takes the whole inbox at once, so only the work that finds it empty needs to
  // wake the loop: whatever joins before the loop takes it is taken along.
  if (!first) return;
  uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof one);
}

void ConnectionGate::Adopt(int fd) {
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  int yes = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
  auto shared = std::make_shared<std::unique_ptr<GateConnection>>(std::make_unique<GateConnection>(*this, fd));
  PostToLoop([this, shared] {
    const std::string& peer = (*shared)->peer_address();
    {
      // Counted here, on the loop's thread, so that the bounds see exactly the
      // connections the loop can evict from.
      std::lock_guard lock(mutex_);
      ++per_peer_[peer];
      ++stats_.open;
      (*shared)->counted_ = true;
    }
    if (!MakeRoomFor(peer)) {
      // Nothing can be evicted: every connection is being served or parked.
      Answer((*shared)->fd(), 503, "the server holds too many connections from " + peer +
                                       "; close idle connections and retry");
      return;  // the connection closes as `shared` is released
    }
    Hold(std::move(*shared), Clock::now());
  });
}

void ConnectionGate::Resume(std::unique_ptr<GateConnection> connection) {
  auto shared = std::make_shared<std::unique_ptr<GateConnection>>(std::move(connection));
  PostToLoop([this, shared] { Hold(std::move(*shared), Clock::now()); });
}

void ConnectionGate::Wake() {
  {
    std::lock_guard lock(mutex_);
    if (wake_pending_) return;  // one check serves every change before it runs
    wake_pending_ = true;
  }
  PostToLoop([this] {
    {
      std::lock_guard lock(mutex_);
      wake_pending_ = false;
    }
    CheckParked(Clock::now());
  });
}

void ConnectionGate::Released(const std::string& peer) {
  std::lock_guard lock(mutex_);
  auto it = per_peer_.find(peer);
  if (it != per_peer_.end() && --it->second == 0) per_peer_.erase(it);
  --stats_.open;
}

bool ConnectionGate::MakeRoomFor(const std::string& peer) {
  size_t from_peer, open;
  {
    std::lock_guard lock(mutex_);
    from_peer = per_peer_[peer];
    open = stats_.open;
  }
  if (from_peer <= limits_.max_per_peer && open <= limits_.max_connections) return true;
  bool peer_over = from_peer > limits_.max_per_peer;
  // Evict the connection that has waited longest without a complete request.
  int oldest = -1;
  Clock::time_point oldest_since = Clock::time_point::max();
  for (const auto& [fd, held] : held_) {
    if (held.waiting == Waiting::kParked) continue;  // a request is complete: it will be served
    if (peer_over && held.connection->peer_address() != peer) continue;
    if (held.since < oldest_since) oldest = fd, oldest_since = held.since;
  }
  if (oldest < 0) return false;
  {
    std::lock_guard lock(mutex_);
    ++stats_.evicted;
  }
  Drop(oldest);
  return true;
}

void ConnectionGate::Hold(std::unique_ptr<GateConnection> connection, Clock::time_point now) {
  int fd = connection->fd();
  Held& held = held_[fd];
  held = Held{};
  held.connection = std::move(connection);
  held.since = now;
  SetDeadline(held, now + limits_.idle_timeout);
  held.has_bytes = !held.connection->buffer_.empty();
  epoll_event event{};
  event.events = EPOLLIN | EPOLLRDHUP;
  event.data.fd = fd;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) != 0) {
    held_.erase(fd);
    return;
  }
  if (held.has_bytes) {  // a pipelined request already waits in the buffer
    SetDeadline(held, now + limits_.head_timeout);
    Frame(held, true, now);
  }
}

void ConnectionGate::Forget(Held& held) {
  if (!held.total_size) return;
  buffering_ -= *held.total_size;
  held.total_size.reset();
  std::lock_guard lock(mutex_);
  stats_.receiving_bytes = buffering_;
}

void ConnectionGate::Drop(int fd) {
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  auto it = held_.find(fd);
  if (it == held_.end()) return;
  Forget(it->second);
  if (it->second.waiting == Waiting::kParked) {
    std::lock_guard lock(mutex_);
    --stats_.parked;  // a long poll whose client hung up
  }
  held_.erase(it);
}

void ConnectionGate::Answer(int fd, int http_status, const std::string& reason) {
  {
    std::lock_guard lock(mutex_);
    ++stats_.refused;
  }
  std::string body = ErrorBody(StatusForRefusal(http_status, reason)).dump();
  SendAll(fd, "HTTP/1.1 " + std::to_string(http_status) + " " + ReasonPhrase(http_status) +
                  "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " +
                  std::to_string(body.size()) + "\r\n\r\n" + body);
}

void ConnectionGate::Refuse(int fd, int http_status, const std::string& reason) {
  Answer(fd, http_status, reason);
  auto it = held_.find(fd);
  if (it == held_.end()) return;
  // Closing with unread bytes would reset the connection, and the client could lose the
  // answer: read and discard what it still sends, for a while.
  shutdown(fd, SHUT_WR);
  Held& held = it->second;
  Forget(held);
  held.waiting = Waiting::kDraining;
  SetDeadline(held, Clock::now() + limits_.linger_timeout);
  held.connection->buffer_.clear();
  held.connection->buffer_.shrink_to_fit();
}

void ConnectionGate::Drain(int fd) {
  char scratch[kReadChunk];
  for (;;) {
    ssize_t n = recv(fd, scratch, sizeof scratch, 0);
    if (n > 0) continue;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    return Drop(fd);  // the client has closed, or the socket broke
  }
}

void ConnectionGate::OnEvent(int fd, uint32_t events, Clock::time_point now) {
  auto it = held_.find(fd);
  if (it == held_.end()) return;
  Held& held = it->second;
  if (held.waiting == Waiting::kDraining && !(events & (EPOLLHUP | EPOLLERR))) return Drain(fd);
  if (held.waiting != Waiting::kForRequest || (events & (EPOLLHUP | EPOLLERR))) {
    Drop(fd);  // a parked client that hangs up, or a broken socket
    return;
  }
  std::string& buffer = held.connection->buffer_;
  const size_t most = limits_.request.max_head + limits_.request.max_body + kReadChunk;
  bool new_line_seen = !held.has_bytes;  // frame the first bytes at once: garbage is refused early
  bool peer_closed = false;
  char chunk[kReadChunk];
  while (buffer.size() < most) {
    ssize_t n = recv(fd, chunk, sizeof chunk, 0);
    if (n == 0) {
      peer_closed = true;  // a request sent whole before a half-close is still served
      break;
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      if (errno == EINTR) continue;
      return Drop(fd);
    }
    if (!held.has_bytes) {
      held.has_bytes = true;
      held.since = now;
      SetDeadline(held, now + limits_.head_timeout);
    }
    new_line_seen = new_line_seen || std::memchr(chunk, '\n', static_cast<size_t>(n)) != nullptr;
    buffer.append(chunk, static_cast<size_t>(n));
    // A short read emptied the socket: what comes later is another event (the epoll set is
    // level-triggered), so no read is spent on learning that nothing more is there.
    if (static_cast<size_t>(n) < sizeof chunk) break;
  }
  Frame(held, new_line_seen, now);
  auto still = held_.find(fd);
  if (peer_closed && still != held_.end() && still->second.waiting == Waiting::kForRequest) Drop(fd);
}

void ConnectionGate::Frame(Held& held, bool new_line_seen, Clock::time_point now) {
  GateConnection& connection = *held.connection;
  const std::string& buffer = connection.buffer_;
  bool worth_framing = held.total_size ? buffer.size() >= *held.total_size
                                       : new_line_seen || buffer.size() > limits_.request.max_head;
  if (!worth_framing) return;
  Framing framing = FrameRequest(buffer, limits_.request);
  int fd = connection.fd();
  if (auto* refusal = std::get_if<FramingRefusal>(&framing)) return Refuse(fd, refusal->http_status, refusal->reason);
  if (auto* more = std::get_if<NeedMoreBytes>(&framing)) {
    if (more->total_size && !held.total_size) {
      if (buffering_ + *more->total_size > limits_.max_buffered_bytes) {
        return Refuse(fd, 503, "the server is receiving " + std::to_string(buffering_) +
                                   " bytes of requests at once, and this one's " + std::to_string(*more->total_size) +
                                   " would pass its limit of " + std::to_string(limits_.max_buffered_bytes) +
                                   "; retry in a moment");
      }
      buffering_ += *more->total_size;
      held.total_size = more->total_size;
      {
        std::lock_guard lock(mutex_);
        stats_.receiving_bytes = buffering_;
      }
      size_t body = *more->total_size - buffer.size();
      SetDeadline(held, now + limits_.head_timeout + std::chrono::seconds(body / std::max<size_t>(limits_.min_body_rate, 1)));
    }
    if (more->expects_continue && !held.continue_sent) {
      SendAll(fd, "HTTP/1.1 100 Continue\r\n\r\n");
      held.continue_sent = true;
    }
    return;
  }
  Forget(held);
  connection.request_ = std::get<FramedRequest>(std::move(framing));
  std::optional<ParkedWait> park = parking_rule_ ? parking_rule_(connection.request_) : std::nullopt;
  if (!park) return DispatchHeld(fd, {});
  if (park->ready && park->ready()) return DispatchHeld(fd, std::move(park->served_params));
  held.waiting = Waiting::kParked;
  SetDeadline(held, park->deadline);
  held.ready = std::move(park->ready);
  connection.served_params_ = std::move(park->served_params);
  epoll_event event{};
  event.events = EPOLLRDHUP;  // only a hang-up matters while parked
  event.data.fd = fd;
  epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &event);
  std::lock_guard lock(mutex_);
  ++stats_.parked;
}

void ConnectionGate::DispatchHeld(int fd, std::vector<std::string> served_params) {
  auto it = held_.find(fd);
  if (it == held_.end()) return;
  if (it->second.waiting == Waiting::kParked) {
    std::lock_guard lock(mutex_);
    --stats_.parked;
  }
  std::unique_ptr<GateConnection> connection = std::move(it->second.connection);
  if (!served_params.empty()) connection->served_params_ = std::move(served_params);
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  held_.erase(it);
  dispatch_(std::move(connection));
}

void ConnectionGate::CheckParked(Clock::time_point now) {
  std::vector<int> due;
  for (auto& [fd, held] : held_) {
    if (held.waiting != Waiting::kParked) continue;
    if (now >= held.deadline || !held.ready || held.ready()) due.push_back(fd);
  }
  for (int fd : due) DispatchHeld(fd, {});
}

void ConnectionGate::SetDeadline(Held& held, Clock::time_point deadline) {
  held.deadline = deadline;
  earliest_deadline_ = std::min(earliest_deadline_, deadline);
}

void ConnectionGate::Sweep(Clock::time_point now) {
  bool any_parked;
  {
    std::lock_guard lock(mutex_);
    any_parked = stats_.parked > 0;
  }
  // Thousands of kept-alive connections wait out long idle deadlines: nothing to look at
  // until the earliest of them, unless parked waits' conditions need checking.
  if (now < earliest_deadline_ && !any_parked) return;
  earliest_deadline_ = Clock::time_point::max();
  std::vector<int> late;
  std::vector<int> drained;
  for (auto& [fd, held] : held_) {
    if (held.waiting == Waiting::kForRequest && now >= held.deadline) late.push_back(fd);
    else if (held.waiting == Waiting::kDraining && now >= held.deadline) drained.push_back(fd);
    else earliest_deadline_ = std::min(earliest_deadline_, held.deadline);
  }
  for (int fd : drained) Drop(fd);
  for (int fd : late) {
    {
      std::lock_guard lock(mutex_);
      ++stats_.timed_out;
    }
    if (!held_[fd].has_bytes) {
      Drop(fd);  // idle: a kept-alive connection the client no longer uses
    } else {
      Refuse(fd, 408, "the request did not arrive in time; send the whole request within " +
                          std::to_string(limits_.head_timeout.count() / 1000) + " s");
    }
  }
  CheckParked(now);
}

void ConnectionGate::Loop() {
  std::vector<epoll_event> events(256);
  Clock::time_point next_sweep = Clock::now() + kSweepInterval;
  for (;;) {
    int timeout = static_cast<int>(
        std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::milliseconds>(next_sweep - Clock::now()).count()));
    int n = epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), timeout);
    Clock::time_point now = Clock::now();
    for (int i = 0; i < n; ++i) {
      if (events[i].data.fd == wake_fd_) {
        uint64_t count;
        (void)!read(wake_fd_, &count, sizeof count);
        continue;
      }
      OnEvent(events[i].data.fd, events[i].events, now);
    }
    std::vector<std::function<void()>> work;
    {
      std::lock_guard lock(mutex_);
      if (stopping_) break;
      work.swap(inbox_);
    }
    for (auto& item : work) item();
    if (now >= next_sweep) {
      Sweep(now);
      next_sweep = now + kSweepInterval;
    }
  }
  std::vector<std::function<void()>> unserved;
  {
    std::lock_guard lock(mutex_);
    unserved.swap(inbox_);
  }
  unserved.clear();  // adopted and resumed connections close here
  held_.clear();
}

}  // namespace shoal
