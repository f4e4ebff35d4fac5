#include "master/rabit_tracker.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "common/log.h"
#include "master/rabit_topology.h"

namespace shoal {
namespace {

constexpr int kMagic = 0xff99;

// One worker's connection, speaking the tracker protocol: native-endian 32-bit integers
// and length-prefixed strings. Every call fails (returns false) on a closed or silent peer.
class Peer {
 public:
  Peer(int fd, std::string host) : fd_(fd), host_(std::move(host)) {
    timeval timeout{30, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  }
  ~Peer() { Close(); }
  Peer(Peer&& other) noexcept : fd_(std::exchange(other.fd_, -1)), host_(std::move(other.host_)) {}
  Peer& operator=(Peer&& other) noexcept {
    Close();
    fd_ = std::exchange(other.fd_, -1);
    host_ = std::move(other.host_);
    return *this;
  }

  bool RecvInt(int* value) { return RecvAll(value, sizeof *value); }
  bool SendInt(int value) { return SendAll(&value, sizeof value); }
  bool RecvString(std::string* out) {
    int length = 0;
    if (!RecvInt(&length) || length < 0 || length > (1 << 20)) return false;
    out->assign(static_cast<size_t>(length), '\0');
    return length == 0 || RecvAll(out->data(), out->size());
  }
  bool SendString(const std::string& text) {
    return SendInt(static_cast<int>(text.size())) && SendAll(text.data(), text.size());
  }
  const std::string& host() const { return host_; }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  bool RecvAll(void* data, size_t size) {
    char* p = static_cast<char*>(data);
    while (size > 0) {
      ssize_t n = recv(fd_, p, size, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      p += n;
      size -= static_cast<size_t>(n);
    }
    return true;
  }
  bool SendAll(const void* data, size_t size) {
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
      ssize_t n = send(fd_, p, size, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      p += n;
      size -= static_cast<size_t>(n);
    }
    return true;
  }

  int fd_;
  std::string host_;
};

struct WorkerHello {
  int rank = -1;
  int world_size = -1;
  std::string task_id;
  std::string command;
};

struct Waiting {  // a worker that still expects connections from others
  std::string host;
  int port = 0;
  int wait_accept = 0;
};

std::optional<WorkerHello> Handshake(Peer& peer) {
  int magic = 0;
  if (!peer.RecvInt(&magic) || magic != kMagic || !peer.SendInt(kMagic)) return std::nullopt;
  WorkerHello hello;
  if (!peer.RecvInt(&hello.rank) || !peer.RecvInt(&hello.world_size) || !peer.RecvString(&hello.task_id) ||
      !peer.RecvString(&hello.command)) {
    return std::nullopt;
  }
  return hello;
}

// Tells a worker its rank and neighbours, then brokers its connections to the workers
// already waiting for it (xgboost tracker.py's assign_rank and _get_remote).
bool AssignRank(Peer& peer, int rank, const RabitLinkMap& links, std::map<int, Waiting>& waiting, Waiting* self) {
  std::set<int> neighbours(links.tree.at(rank).begin(), links.tree.at(rank).end());
  auto [prev, next] = links.ring.at(rank);
  if (!peer.SendInt(rank) || !peer.SendInt(links.parent.at(rank)) || !peer.SendInt(static_cast<int>(links.tree.size())) ||
      !peer.SendInt(static_cast<int>(neighbours.size()))) {
    return false;
  }
  for (int n : neighbours) {
    if (!peer.SendInt(n)) return false;
  }
  for (int ring_peer : {prev, next}) {
    bool linked = ring_peer != -1 && ring_peer != rank;
    if (linked) neighbours.insert(ring_peer);
    if (!peer.SendInt(linked ? ring_peer : -1)) return false;
  }
  while (true) {
    int good_count = 0;
    if (!peer.RecvInt(&good_count) || good_count < 0 || good_count > static_cast<int>(neighbours.size())) return false;
    std::set<int> good;
    for (int i = 0; i < good_count; ++i) {
      int r = 0;
      if (!peer.RecvInt(&r)) return false;
      good.insert(r);
    }
    std::vector<int> bad, connect;
    for (int n : neighbours) {
      if (good.count(n)) continue;
      bad.push_back(n);
      if (waiting.count(n)) connect.push_back(n);
    }
    if (!peer.SendInt(static_cast<int>(connect.size())) || !peer.SendInt(static_cast<int>(bad.size() - connect.size()))) {
      return false;
    }
    for (int r : connect) {
      if (!peer.SendString(waiting[r].host) || !peer.SendInt(waiting[r].port) || !peer.SendInt(r)) return false;
    }
    int errors = 0;
    if (!peer.RecvInt(&errors)) return false;
    if (errors != 0) continue;
    if (!peer.RecvInt(&self->port)) return false;
    for (int r : connect) {
      if (--waiting[r].wait_accept == 0) waiting.erase(r);
    }
    self->host = peer.host();
    self->wait_accept = static_cast<int>(bad.size() - connect.size());
    return true;
  }
}

// Task ids are Shoal's worker indices: order them as numbers when they are.
bool TaskIdLess(const std::string& a, const std::string& b) {
  bool a_num = !a.empty() && a.find_first_not_of("0123456789") == std::string::npos && a.size() < 10;
  bool b_num = !b.empty() && b.find_first_not_of("0123456789") == std::string::npos && b.size() < 10;
  if (a_num && b_num) return std::stoi(a) < std::stoi(b);
  return a < b;
}

}  // namespace

Result<int> RabitTracker::Start(const std::string& host) {
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) return Unavailable(std::string("rabit tracker: socket: ") + strerror(errno));
  int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) addr.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t len = sizeof addr;
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(listen_fd_, 256) != 0 ||
      getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return Unavailable(std::string("rabit tracker: cannot listen on ") + host + ": " + strerror(errno));
  }
  thread_ = std::thread([this] { Serve(); });
  return static_cast<int>(ntohs(addr.sin_port));
}

void RabitTracker::Stop() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
  if (listen_fd_ >= 0) close(listen_fd_);
  listen_fd_ = -1;
}

void RabitTracker::Serve() {
  std::set<int> shut_down;
  std::map<int, Waiting> waiting;
  std::map<std::string, int> rank_of_task;
  std::vector<std::pair<Peer, WorkerHello>> pending;
  std::optional<RabitLinkMap> links;
  std::deque<int> unassigned;
  int workers = workers_;
  auto assign = [&](Peer& peer, const WorkerHello& hello, int rank) {
    Waiting self;
    if (!AssignRank(peer, rank, *links, waiting, &self)) {
      LogError("rabit tracker: worker " + hello.task_id + " (rank " + std::to_string(rank) + ") broke off");
      return;
    }
    if (self.wait_accept > 0) waiting[rank] = self;
  };
  while (!stopping_ && static_cast<int>(shut_down.size()) < workers) {
    pollfd pfd{listen_fd_, POLLIN, 0};
    if (poll(&pfd, 1, 200) <= 0) continue;
    sockaddr_in from{};
    socklen_t from_len = sizeof from;
    int fd = accept4(listen_fd_, reinterpret_cast<sockaddr*>(&from), &from_len, SOCK_CLOEXEC);
    if (fd < 0) continue;
    char text[INET_ADDRSTRLEN] = "127.0.0.1";
    inet_ntop(AF_INET, &from.sin_addr, text, sizeof text);
    Peer peer(fd, text);
    auto hello = Handshake(peer);
    if (!hello) {
      LogError(std::string("rabit tracker: a connection from ") + text + " did not speak the tracker protocol");
      continue;
    }
    if (hello->command == "print") {
      std::string message;
      if (peer.RecvString(&message)) LogInfo("rabit: " + message);
      continue;
    }
    if (hello->command == "shutdown") {
      if (hello->rank >= 0) shut_down.insert(hello->rank);
      continue;
    }
    if (hello->command != "start" && hello->command != "recover") {
      LogError("rabit tracker: unknown command '" + hello->command + "'");
      continue;
    }
    if (!links) {
      if (hello->world_size > 0) workers = hello->world_size;
      links = ComputeRabitLinkMap(workers);
      for (int r = 0; r < workers; ++r) unassigned.push_back(r);
    }
    int rank = hello->rank;
    if (rank < 0 && hello->task_id != "NULL" && rank_of_task.count(hello->task_id)) rank = rank_of_task[hello->task_id];
    if (rank >= workers) {
      LogError("rabit tracker: rank " + std::to_string(rank) + " is outside a world of " + std::to_string(workers));
      continue;
    }
    if (rank >= 0) {
      assign(peer, *hello, rank);
      continue;
    }
    pending.emplace_back(std::move(peer), *hello);
    if (pending.size() < unassigned.size()) continue;
    std::stable_sort(pending.begin(), pending.end(),
                     [](const auto& a, const auto& b) { return TaskIdLess(a.second.task_id, b.second.task_id); });
    for (auto& [pending_peer, pending_hello] : pending) {
      int next = unassigned.front();
      unassigned.pop_front();
      if (pending_hello.task_id != "NULL") rank_of_task[pending_hello.task_id] = next;
      assign(pending_peer, pending_hello, next);
    }
    pending.clear();
  }
  finished_ = static_cast<int>(shut_down.size()) >= workers;
}

}  // namespace shoal
