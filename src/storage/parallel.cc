#include "storage/parallel.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

namespace shoal::storage {

Status RunParallel(int n, int parallelism, const std::function<Status(int)>& work) {
  std::atomic<int> next{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  Status first;
  auto loop = [&] {
    for (;;) {
      int i = next++;
      if (i >= n || failed) return;
      Status s = work(i);
      if (!s.ok()) {
        std::lock_guard lock(mu);
        if (!failed.exchange(true)) first = s;
      }
    }
  };
  int threads = std::max(1, std::min(parallelism, n));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(loop);
  loop();
  for (auto& t : pool) t.join();
  return first;
}

}  // namespace shoal::storage
