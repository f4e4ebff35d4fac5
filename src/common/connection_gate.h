// The front door of Shoal's HTTP servers: one epoll thread holds every client connection
// until a whole request (head and body) has arrived, and only then hands it to a worker.
// Idle, slow and hostile clients cost a file descriptor and a buffer, never a worker
// thread; long polls wait here, parked, not in a worker. cpp-httplib still routes and
// answers each request (common/gated_http_server.h); the gate replaces its
// thread-per-connection reading, which 32 slow clients could stop.
//
// Contract:
//  - Adopt(fd) takes an accepted socket (made non-blocking here). Thread-safe.
//  - Deadlines: a connection sends the first byte of a request within idle_timeout of
//    being adopted (or of its previous response), its whole head within head_timeout of
//    that byte, and its body at min_body_rate after head_timeout's grace. Past a deadline
//    the gate answers 408 and closes (an idle connection is closed silently).
//  - A request that request_framing.h refuses is answered here with that status and a
//    JSON error body. The connection then lingers (up to linger_timeout, reading and
//    discarding what the client still sends) before it closes, so that a client still
//    sending a long request reads the answer instead of a reset.
//  - Bounds: a peer (IP address) holds at most max_per_peer connections and the gate at
//    most max_connections. A newcomer over a bound evicts the connection that has waited
//    longest without a complete request (the peer's own first); when none can be evicted
//    it is answered 503 and closed. A flood from one address cannot lock the others out,
//    and a request from a flooded address still gets through. The bodies the gate is
//    receiving at once are bounded too (max_buffered_bytes, by their Content-Length): a
//    request that would pass it is answered 503, so slow uploads cannot exhaust memory.
//  - Parking: each complete request is shown to the parking rule. When the rule parks it,
//    it waits here until its ready() holds (checked after each Wake() and at each sweep)
//    or its deadline passes, then is dispatched with the rule's served_params (query
//    parameters the wait has served, which the server removes before routing).
//  - Dispatch is called on the gate's thread and must not block. The dispatched
//    connection belongs to the receiver, which gives it back with Resume() to wait for
//    the next request on a kept-alive connection, or destroys it to close the socket.
//  - Stop() closes every connection the gate holds and ends its thread; a connection
//    resumed afterwards is closed. The destructor stops. Stats() is thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/request_framing.h"

namespace shoal {

class ConnectionGate;

// One client connection. The socket closes when this is destroyed.
class GateConnection {
 public:
  GateConnection(ConnectionGate& gate, int fd);
  ~GateConnection();
  GateConnection(const GateConnection&) = delete;
  GateConnection& operator=(const GateConnection&) = delete;

  int fd() const { return fd_; }
  const std::string& peer_address() const { return peer_address_; }
  int peer_port() const { return peer_port_; }
  const std::string& local_address() const { return local_address_; }
  int local_port() const { return local_port_; }

  // The complete request at the head of the buffer (valid once dispatched).
  const FramedRequest& request() const { return request_; }
  std::string_view request_bytes() const { return std::string_view(buffer_).substr(0, request_.total_size); }
  // Query parameters a parked wait has already served.
  const std::vector<std::string>& served_params() const { return served_params_; }
  // Drops the served request from the buffer; pipelined bytes after it stay.
  void ConsumeRequest();

 private:
  friend class ConnectionGate;
  ConnectionGate& gate_;
  int fd_;
  std::string peer_address_, local_address_;
  int peer_port_ = 0, local_port_ = 0;
  std::string buffer_;
  FramedRequest request_;
  std::vector<std::string> served_params_;
  bool counted_ = false;  // in the gate's bounds (set on the gate's thread)
};

struct GateLimits {
  std::chrono::milliseconds idle_timeout{30'000};
  std::chrono::milliseconds head_timeout{10'000};
  std::chrono::milliseconds linger_timeout{2'000};
  size_t min_body_rate = 64 * 1024;  // bytes per second, after head_timeout's grace
  size_t max_connections = 16'384;
  size_t max_per_peer = 4'096;
  size_t max_buffered_bytes = size_t{1} << 30;  // requests being received, by their declared size
  RequestLimits request;
};

struct ParkedWait {
  std::function<bool()> ready;  // called on the gate's thread; must be quick
  std::chrono::steady_clock::time_point deadline;
  std::vector<std::string> served_params;
};
using ParkingRule = std::function<std::optional<ParkedWait>(const FramedRequest&)>;

struct GateStats {
  size_t open = 0;      // connections the gate holds or has dispatched
  size_t parked = 0;    // long polls waiting in the gate
  uint64_t refused = 0; // requests answered by the gate itself (4xx, 503)
  uint64_t evicted = 0; // connections closed to make room for newcomers
  uint64_t timed_out = 0;
  size_t receiving_bytes = 0;  // the declared sizes of the requests being received
};

class ConnectionGate {
 public:
  using Dispatch = std::function<void(std::unique_ptr<GateConnection>)>;
  ConnectionGate(GateLimits limits, Dispatch dispatch);
  ~ConnectionGate();
  ConnectionGate(const ConnectionGate&) = delete;
  ConnectionGate& operator=(const ConnectionGate&) = delete;

  // Call before the first Adopt().
  void set_parking_rule(ParkingRule rule) { parking_rule_ = std::move(rule); }

  void Adopt(int fd);
  void Resume(std::unique_ptr<GateConnection> connection);
  void Wake();  // something parked requests wait for may have changed
  void Stop();
  GateStats Stats() const;
  const GateLimits& limits() const { return limits_; }

 private:
  friend class GateConnection;
  using Clock = std::chrono::steady_clock;
  enum class Waiting { kForRequest, kParked, kDraining };
  struct Held {
    std::unique_ptr<GateConnection> connection;
    Waiting waiting = Waiting::kForRequest;
    Clock::time_point since;     // when it began waiting for this request
    Clock::time_point deadline;  // when the gate gives up on it (or dispatches a parked wait)
    bool has_bytes = false;
    std::optional<size_t> total_size;  // once its head is in; counted in buffering_
    bool continue_sent = false;
    std::function<bool()> ready;
  };

  void Loop();
  void PostToLoop(std::function<void()> work);
  void SetDeadline(Held& held, Clock::time_point deadline);  // and keeps earliest_deadline_ at or before it
  void Hold(std::unique_ptr<GateConnection> connection, Clock::time_point now);
  bool MakeRoomFor(const std::string& peer);
  void OnEvent(int fd, uint32_t events, Clock::time_point now);
  void Frame(Held& held, bool new_line_seen, Clock::time_point now);
  void Answer(int fd, int http_status, const std::string& reason);  // a refusal, written best effort
  void Refuse(int fd, int http_status, const std::string& reason);  // Answer, then drain and Drop
  void DispatchHeld(int fd, std::vector<std::string> served_params);
  void Drain(int fd);  // reads and discards what a refused client still sends
  void Drop(int fd);
  void Forget(Held& held);  // its request no longer counts as being received
  void CheckParked(Clock::time_point now);
  void Sweep(Clock::time_point now);
  void Released(const std::string& peer);

  const GateLimits limits_;
  const Dispatch dispatch_;
  ParkingRule parking_rule_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;

  // Owned by the loop's thread.
  std::unordered_map<int, Held> held_;
  Clock::time_point earliest_deadline_ = Clock::time_point::max();  // of held_, or earlier; loop thread only
  size_t buffering_ = 0;  // the declared sizes of the requests being received

  mutable std::mutex mutex_;
  std::vector<std::function<void()>> inbox_;  // guarded by mutex_
  bool stopping_ = false;                     // guarded by mutex_
  bool wake_pending_ = false;                 // guarded by mutex_
  std::unordered_map<std::string, size_t> per_peer_;  // guarded by mutex_
  GateStats stats_;                                   // guarded by mutex_
  std::thread loop_;
};

}  // namespace shoal
