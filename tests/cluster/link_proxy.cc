#include "tests/cluster/link_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <memory>

namespace shoal::testing {
namespace {

sockaddr_in LoopbackAddress(const std::string& host, int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, host.c_str(), &address.sin_addr);
  return address;
}

// Copies what is readable on `from` to `to`; false when `from` closed or either failed.
bool Forward(int from, int to) {
  char buffer[16 * 1024];
  ssize_t n = read(from, buffer, sizeof buffer);
  if (n <= 0) return false;
  for (ssize_t written = 0; written < n;) {
    ssize_t w = write(to, buffer + written, static_cast<size_t>(n - written));
    if (w <= 0) return false;
    written += w;
  }
  return true;
}

}  // namespace

Result<std::unique_ptr<LinkProxy>> LinkProxy::Start(const std::string& target) {
  size_t colon = target.rfind(':');
  if (colon == std::string::npos) return InvalidArgument("a link's target must be host:port, not '" + target + "'");
  int target_port = std::atoi(target.c_str() + colon + 1);
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address = LoopbackAddress("127.0.0.1", 0);
  socklen_t length = sizeof address;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || listen(fd, 64) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    if (fd >= 0) close(fd);
    return Internal("cannot listen for a link proxy on 127.0.0.1");
  }
  std::string listening = "127.0.0.1:" + std::to_string(ntohs(address.sin_port));
  return std::unique_ptr<LinkProxy>(new LinkProxy(fd, listening, target.substr(0, colon), target_port));
}

LinkProxy::LinkProxy(int listen_fd, std::string address, std::string target_host, int target_port)
    : listen_fd_(listen_fd), address_(std::move(address)), target_host_(std::move(target_host)),
      target_port_(target_port) {
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

LinkProxy::~LinkProxy() {
  stopping_ = true;
  if (acceptor_.joinable()) acceptor_.join();
  close(listen_fd_);
  for (auto& relay : relays_) relay->thread.join();
}

void LinkProxy::AcceptLoop() {
  while (!stopping_) {
    pollfd ready{listen_fd_, POLLIN, 0};
    if (poll(&ready, 1, 20) <= 0) continue;
    int client = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    if (cut_) {
      close(client);  // the partition: the peer is unreachable
      continue;
    }
    std::erase_if(relays_, [](const std::unique_ptr<Relay>& relay) {
      bool finished = relay->finished;
      if (finished) relay->thread.join();
      return finished;
    });
    auto relay = std::make_unique<Relay>();
    Relay* raw = relay.get();
    relay->thread = std::thread([this, client, raw] {
      Serve(client);
      raw->finished = true;
    });
    relays_.push_back(std::move(relay));
  }
}

void LinkProxy::Serve(int client_fd) {
  int server_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in target = LoopbackAddress(target_host_, target_port_);
  if (server_fd >= 0 && connect(server_fd, reinterpret_cast<sockaddr*>(&target), sizeof target) == 0) {
    while (!stopping_ && !cut_) {
      pollfd fds[2] = {{client_fd, POLLIN, 0}, {server_fd, POLLIN, 0}};
      if (poll(fds, 2, 20) < 0) break;
      if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) && !Forward(client_fd, server_fd)) break;
      if ((fds[1].revents & (POLLIN | POLLHUP | POLLERR)) && !Forward(server_fd, client_fd)) break;
    }
  }
  if (server_fd >= 0) close(server_fd);
  close(client_fd);
}

}  // namespace shoal::testing
