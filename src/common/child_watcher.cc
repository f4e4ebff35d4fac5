#include "common/child_watcher.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace shoal {

int OpenPidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));  // pidfds are close-on-exec
#else
  errno = ENOSYS;
  return -1;
#endif
}

ChildWatcher::ChildWatcher(std::function<void()> on_exit) : on_exit_(std::move(on_exit)) {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (epoll_fd_ < 0 || stop_fd_ < 0) return;
  epoll_event stop{};
  stop.events = EPOLLIN;
  stop.data.fd = stop_fd_;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, stop_fd_, &stop) != 0) return;
  thread_ = std::thread([this] { Run(); });
}

ChildWatcher::~ChildWatcher() {
  if (thread_.joinable()) {
    uint64_t one = 1;
    (void)!write(stop_fd_, &one, sizeof one);
    thread_.join();
  }
  if (epoll_fd_ >= 0) close(epoll_fd_);
  if (stop_fd_ >= 0) close(stop_fd_);
}

bool ChildWatcher::Watch(pid_t pid) {
  if (!thread_.joinable() || pid <= 0) return false;
  int fd = OpenPidfd(pid);
  if (fd < 0) return false;
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = fd;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) != 0) {
    close(fd);
    return false;
  }
  return true;
}

void ChildWatcher::Run() {
  epoll_event events[16];
  while (true) {
    int n = epoll_wait(epoll_fd_, events, 16, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    bool exited = false;
    for (int i = 0; i < n; ++i) {
      int fd = events[i].data.fd;
      if (fd == stop_fd_) return;
      epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
      close(fd);
      exited = true;
    }
    if (exited) on_exit_();
  }
}

}  // namespace shoal
