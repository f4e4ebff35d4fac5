#include "collective/transport/shm/fd_passing.h"

#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

namespace shoal::collective::transport::shm {
namespace {

socklen_t AbstractAddress(const std::string& name, sockaddr_un* addr) {
  std::memset(addr, 0, sizeof(*addr));
  addr->sun_family = AF_UNIX;
  std::memcpy(addr->sun_path + 1, name.data(), std::min(name.size(), sizeof(addr->sun_path) - 1));
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
}

Result<std::string> RandomName() {
  unsigned char bytes[12];
  if (getrandom(bytes, sizeof(bytes), 0) != static_cast<ssize_t>(sizeof(bytes)))
    return Unavailable("getrandom: " + tcp::ErrnoText(errno));
  std::string name = "shoal-collective-";
  for (unsigned char b : bytes) {
    name += "0123456789abcdef"[b >> 4];
    name += "0123456789abcdef"[b & 15];
  }
  return name;
}

// One byte of data carrying room for one descriptor (SCM_RIGHTS).
struct FdMessage {
  FdMessage() {
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
  }
  FdMessage(const FdMessage&) = delete;
  char byte = 'F';
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
};

Status SendFd(int sock, int fd) {
  FdMessage m;
  cmsghdr* c = CMSG_FIRSTHDR(&m.msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  while (sendmsg(sock, &m.msg, MSG_NOSIGNAL) < 0)
    if (errno != EINTR) return Unavailable("sending the shared segment: " + tcp::ErrnoText(errno));
  return Status::Ok();
}

}  // namespace

Result<tcp::Fd> ListenAbstract(std::string* name) {
  ASSIGN_OR_RETURN(*name, RandomName());
  tcp::Fd sock(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!sock.valid()) return Unavailable("socket(AF_UNIX): " + tcp::ErrnoText(errno));
  sockaddr_un addr;
  socklen_t len = AbstractAddress(*name, &addr);
  if (bind(sock.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0 || listen(sock.get(), 128) != 0)
    return Unavailable("listening on abstract socket @" + *name + ": " + tcp::ErrnoText(errno));
  return sock;
}

Status ServeFd(int listener, int fd, Deadline deadline, const std::function<bool(uint32_t)>& accept_tag,
               uint32_t* tag) {
  ASSIGN_OR_RETURN(tcp::Fd client, tcp::Accept(listener, deadline));
  ucred cred{};
  socklen_t cred_len = sizeof(cred);
  if (getsockopt(client.get(), SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) != 0)
    return Unavailable("reading the credentials of a local rank: " + tcp::ErrnoText(errno));
  if (cred.uid != geteuid() && cred.uid != 0)
    return PermissionDenied("process " + std::to_string(cred.pid) + " of uid " + std::to_string(cred.uid) +
                            " asked for the shared segment of uid " + std::to_string(geteuid()) + "'s ranks");
  RETURN_IF_ERROR(tcp::ReadFully(client.get(), tag, sizeof(*tag), deadline));
  if (!accept_tag(*tag)) return Unavailable("unexpected local rank " + std::to_string(*tag));
  return SendFd(client.get(), fd);
}

Result<tcp::Fd> ReceiveFd(const std::string& name, uint32_t tag, Deadline deadline) {
  tcp::Fd sock(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!sock.valid()) return Unavailable("socket(AF_UNIX): " + tcp::ErrnoText(errno));
  sockaddr_un addr;
  socklen_t len = AbstractAddress(name, &addr);
  while (connect(sock.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    if (errno != EINTR)
      return Unavailable("connecting to abstract socket @" + name + ": " + tcp::ErrnoText(errno) +
                         " (are the ranks in different network namespaces with one host identity?)");
  }
  RETURN_IF_ERROR(tcp::WriteFully(sock.get(), &tag, sizeof(tag), deadline));
  RETURN_IF_ERROR(tcp::PollOne(sock.get(), POLLIN, deadline, "receiving the shared segment"));
  FdMessage m;
  ssize_t n;
  while ((n = recvmsg(sock.get(), &m.msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
  }
  cmsghdr* c = n > 0 ? CMSG_FIRSTHDR(&m.msg) : nullptr;
  if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
    return Unavailable("the local leader closed without handing over the shared segment");
  int fd;
  std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
  return tcp::Fd(fd);
}

}  // namespace shoal::collective::transport::shm
