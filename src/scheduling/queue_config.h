// Queue configuration: the server's queues.yaml (in its home), read into a
// SchedulingConfig, and re-read when the file changes.
//
//   max_wait: 1h              # after this long, a job that has never run goes before all younger ones
//   max_wait_to_resume: 72h   # the same for a job that has run, over its waits since its first start
//   max_preemption_grace: 10m # the longest preemption_grace a job may ask for (default 10m)
//   service_levels: [0.1, 0.5, 2, 8, 32]   # GPU-hours: least-attained-service order (the default; [] turns it off)
//   min_run_before_preemption: 10m          # what an attempt runs before service preempts it
//   queues:
//     research:
//       guarantee: 40%        # of the cluster's CPUs, memory and GPUs
//       max: 80%              # what it may borrow up to (default 100%)
//       user_limit: {cpus: 8, memory: 32G, gpus: 2}
//       preempt_lower_priority: true   # its jobs may preempt its lower-priority ones (default false)
//       slurm: {partition: gpu, qos: high}   # on Slurm, what its jobs ask for (default: the server's)
//     prod:
//       guarantee: 60%
//
// Contract:
//  - No file: one queue, default, with all of the cluster (today's single queue).
//  - The queue `default` always exists: when the file does not list it, it gets what the
//    listed guarantees leave (never below 0%) and a max of 100%.
//  - Every problem is refused with the file, line and fix: unknown fields, a name that is
//    not [a-z0-9_-]{1,32}, a share that is not "N%" within 0..100, a max below the
//    guarantee, guarantees summing past 100%, a limit that is not a size or count,
//    a preempt_lower_priority that is not `true` or `false`.
//  - QueueConfigFile::Refresh re-reads the file when its modification time or size
//    changed; a file that no longer parses keeps the previous configuration and the
//    error is kept for the API and logged once.
// Thread-safety: ParseQueueConfig is pure; QueueConfigFile is not thread-safe (the
// scheduler owns it and copies the config out).
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "scheduling/schedule_policy.h"

namespace shoal {

// `origin` names the file in errors.
Result<SchedulingConfig> ParseQueueConfig(const std::string& text, const std::string& origin);
SchedulingConfig DefaultSchedulingConfig();

class QueueConfigFile {
 public:
  explicit QueueConfigFile(std::string path) : path_(std::move(path)) {}
  // Reads the file; an error here is the server's to refuse to start with.
  Status Load();
  // Re-reads the file if it changed; true when the configuration changed.
  bool Refresh();
  const SchedulingConfig& config() const { return config_; }
  const std::string& path() const { return path_; }
  // The last reload's error ("" when the file in force is the file on disk).
  const std::string& error() const { return error_; }

 private:
  struct Stamp {
    int64_t mtime_ns = -1;
    int64_t size = -1;
    bool operator==(const Stamp&) const = default;
  };
  Stamp Current() const;
  Result<SchedulingConfig> Read() const;

  std::string path_;
  Stamp stamp_;
  SchedulingConfig config_ = DefaultSchedulingConfig();
  std::string error_;
};

}  // namespace shoal
