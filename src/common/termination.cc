#include "common/termination.h"

#include <pthread.h>
#include <signal.h>

#include <thread>

namespace shoal {
namespace {

sigset_t TerminationSet() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  return signals;
}

}  // namespace

void BlockTerminationSignals() {
  sigset_t signals = TerminationSet();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

void OnTermination(std::function<void()> action) {
  std::thread([action = std::move(action)] {
    sigset_t signals = TerminationSet();
    int sig = 0;
    if (sigwait(&signals, &sig) == 0) action();
  }).detach();
}

}  // namespace shoal
