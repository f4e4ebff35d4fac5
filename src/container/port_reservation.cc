#include "container/port_reservation.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace shoal {

Status PortReservation::Reserve(int count) {
  for (int i = 0; i < count; ++i) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return ResourceExhausted(std::string("cannot reserve a port: ") + strerror(errno));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      std::string reason = strerror(errno);
      close(fd);
      return ResourceExhausted("cannot reserve a port: " + reason);
    }
    fds_.push_back(fd);
    ports_.push_back(ntohs(addr.sin_port));
  }
  return Status::Ok();
}

void PortReservation::Release() {
  for (int fd : fds_) close(fd);
  fds_.clear();
}

}  // namespace shoal
