#include "common/termination.h"

#include <pthread.h>
#include <signal.h>

#include <initializer_list>
#include <thread>

namespace shoal {
namespace {

sigset_t SetOf(std::initializer_list<int> members) {
  sigset_t signals;
  sigemptyset(&signals);
  for (int member : members) sigaddset(&signals, member);
  return signals;
}

sigset_t TerminationSet() { return SetOf({SIGTERM, SIGINT}); }

void OnFirst(sigset_t signals, std::function<void()> action) {
  std::thread([signals, action = std::move(action)] {
    int sig = 0;
    if (sigwait(&signals, &sig) == 0) action();
  }).detach();
}

}  // namespace

void BlockTerminationSignals() {
  sigset_t signals = SetOf({SIGTERM, SIGINT, SIGUSR1, SIGUSR2});
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

void OnTermination(std::function<void()> action) { OnFirst(TerminationSet(), std::move(action)); }

void OnSignal(int sig, std::function<void()> action) { OnFirst(SetOf({sig}), std::move(action)); }

}  // namespace shoal
