#include "hostile_clients.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace shoal {
namespace {

int Connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    std::perror("api_bench: a hostile client cannot connect");
    std::exit(1);
  }
  return fd;
}

void Send(int fd, const std::string& bytes) { (void)!send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL); }

bool ClosedByServer(int fd) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, 0) <= 0) return false;
  char byte;
  return recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0 || (p.revents & (POLLHUP | POLLERR));
}

}  // namespace

HostileClients::HostileClients(int port, const HostileMix& mix) {
  for (int i = 0; i < mix.idle; ++i) idle_.push_back(Connect(port));
  for (int i = 0; i < mix.slow; ++i) {
    slow_.push_back(Connect(port));
    Send(slow_.back(), "GET /api/v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
  }
  for (int i = 0; i < mix.long_polls; ++i) {
    polls_.push_back(Connect(port));
    Send(polls_.back(), "GET " + mix.long_poll_target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  }
  trickle_ = std::thread([this] { Trickle(); });
}

HostileClients::~HostileClients() {
  stop_ = true;
  trickle_.join();
  for (const auto* fds : {&idle_, &slow_, &polls_}) {
    for (int fd : *fds) close(fd);
  }
}

int HostileClients::Closed() const {
  int closed = 0;
  for (const auto* fds : {&idle_, &slow_, &polls_}) {
    for (int fd : *fds) closed += ClosedByServer(fd);
  }
  return closed;
}

void HostileClients::Trickle() {
  while (!stop_) {
    for (int fd : slow_) Send(fd, "a");
    for (int i = 0; i < 10 && !stop_; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace shoal
