// Fuzzes the server's queues.yaml (scheduling/queue_config.h) and the policy over what it
// yields: whatever the file holds, parsing neither crashes nor accepts a configuration
// the policy could not honour (guarantees past 100%, a max below its guarantee, no
// default queue), and one scheduling pass over it admits only what fits.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "scheduling/queue_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto config = shoal::ParseQueueConfig(text, "queues.yaml");
  if (!config.ok()) {
    if (config.status().message().rfind("queues.yaml:", 0) != 0) std::abort();  // every error names the file
    return 0;
  }
  double sum = 0;
  for (const shoal::QueueSpec& queue : config->queues) {
    sum += queue.guarantee;
    if (queue.guarantee < 0 || queue.max + 1e-9 < queue.guarantee || queue.max > 1 || queue.max <= 0) std::abort();
  }
  if (sum > 1 + 1e-6 || !config->FindQueue("default") || config->max_wait_ms <= 0) std::abort();
  shoal::ScheduleInput input;
  input.config = &*config;
  input.cluster.capacity = shoal::Resources{4, 1LL << 30, 2};
  input.cluster.free = input.cluster.capacity;
  input.cluster.free_gpus = {0, 1};
  for (size_t i = 0; i < config->queues.size() && i < 8; ++i) {
    shoal::PendingJob job;
    job.id = "job-" + std::to_string(i);
    job.queue = config->queues[i].name;
    job.user = i % 2 ? "ann" : "bob";
    job.tasks = {shoal::Resources{1.5, 1LL << 28, static_cast<int>(i % 2)}};
    input.pending.push_back(job);
  }
  shoal::Resources taken;
  for (const auto& admitted : Schedule(input).admit) taken += admitted.total;
  if (!input.cluster.capacity.Fits(taken)) std::abort();
  return 0;
}
