// ChildWatcher: tells its owner at once when a watched child process exits, so waits are
// event-driven (a pidfd per child, one epoll thread) instead of polling loops.
//
// Contract:
//  - Watch(pid) starts watching a child of this process; on_exit() is called from the
//    watcher's own thread soon after that child ends (it is not reaped: the owner's
//    TryWait collects it). Watch returns false where the kernel has no pidfds (before
//    Linux 5.3): the owner then keeps polling, as it must anyway for robustness.
//  - on_exit must be quick and must not call back into the watcher.
//  - OpenPidfd(pid): a descriptor (close-on-exec) that polls readable once pid has ended,
//    or -1 where the kernel has none.
// Thread-safety: Watch from any thread; destruction stops the thread.
#pragma once

#include <sys/types.h>

#include <functional>
#include <mutex>
#include <thread>

namespace shoal {

class ChildWatcher {
 public:
  explicit ChildWatcher(std::function<void()> on_exit);
  ~ChildWatcher();
  ChildWatcher(const ChildWatcher&) = delete;
  ChildWatcher& operator=(const ChildWatcher&) = delete;

  bool Watch(pid_t pid);

 private:
  void Run();

  std::function<void()> on_exit_;
  int epoll_fd_ = -1;
  int stop_fd_ = -1;  // an eventfd: written to stop the thread
  std::thread thread_;
};

int OpenPidfd(pid_t pid);

}  // namespace shoal
