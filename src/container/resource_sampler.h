// ResourceSampler: what a task's processes use, sampled by its container once a heartbeat
// for the web UI's charts.
//
// Contract:
//  - Sample(pids) sums CPU time and resident memory over the programs: each process, every
//    descendant (even one that left its process group, as `timeout` does) and every
//    process of its group. cpu_percent is the share of one core used since the previous
//    call (0 on the first); rss_bytes is current. CPU time of descendants that already
//    ended is not counted.
//  - GPU figures are present only when the task was given GPUs and nvidia-smi answers;
//    they are read at most every 5 seconds (nvidia-smi is slow) and repeated between.
//  - ProcfsSampler reads /proc; tests use a fake of this interface.
//  - CgroupSampler reads a confined task's figures from its cgroup, which counts every
//    process of the task (the agent, and the programs' ended children's CPU time too):
//    memory without reclaimable page cache, and CPU time since the previous call; GPU
//    figures still come from nvidia-smi.
// Thread-safety: one caller.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "isolation/cgroup_group.h"

namespace shoal {

struct ProcessUsage {
  double cpu_percent = 0;
  int64_t rss_bytes = 0;
  std::optional<int64_t> rss_peak_bytes;  // the cgroup's own peak, where the task has one
  std::optional<double> gpu_util_percent;
  std::optional<int64_t> gpu_memory_bytes;
};

class ResourceSampler {
 public:
  virtual ~ResourceSampler() = default;
  virtual ProcessUsage Sample(const std::vector<pid_t>& programs) = 0;
};

// The task's GPU figures from nvidia-smi, asked at most every 5 seconds; both samplers use it.
class GpuSampler {
 public:
  // visible_gpus: the task's CUDA_VISIBLE_DEVICES ("" for none).
  GpuSampler(const Clock& clock, std::string visible_gpus) : clock_(clock), visible_gpus_(std::move(visible_gpus)) {}
  // Sets the usage's GPU figures when the task has GPUs.
  void Fill(ProcessUsage& usage);

 private:
  void Ask();

  const Clock& clock_;
  std::string visible_gpus_;
  int64_t last_ms_ = -1'000'000;
  std::optional<double> util_;
  std::optional<int64_t> memory_;
};

class ProcfsSampler final : public ResourceSampler {
 public:
  ProcfsSampler(const Clock& clock, std::string visible_gpus) : clock_(clock), gpus_(clock, std::move(visible_gpus)) {}
  ProcessUsage Sample(const std::vector<pid_t>& programs) override;

 private:
  const Clock& clock_;
  GpuSampler gpus_;
  int64_t last_ticks_ = -1;
  int64_t last_time_ms_ = 0;
};

class CgroupSampler final : public ResourceSampler {
 public:
  CgroupSampler(const Clock& clock, std::string visible_gpus, CgroupGroup group)
      : clock_(clock), gpus_(clock, std::move(visible_gpus)), group_(std::move(group)) {}
  ProcessUsage Sample(const std::vector<pid_t>& programs) override;  // `programs` unused: the group holds them all

 private:
  const Clock& clock_;
  GpuSampler gpus_;
  CgroupGroup group_;
  int64_t last_cpu_ns_ = -1;
  int64_t last_time_ms_ = 0;
};

}  // namespace shoal
