#include "container/resource_sampler.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>
#include <vector>

#include "container/process_tree.h"
#include "isolation/cgroup_control.h"

namespace shoal {

ProcfsSampler::ProcfsSampler(const Clock& clock, std::string visible_gpus)
    : clock_(clock), visible_gpus_(std::move(visible_gpus)) {}

ProcessUsage ProcfsSampler::Sample(const std::vector<pid_t>& programs) {
  std::vector<ProcessStat> table = ReadProcessTable();
  int64_t ticks = 0, pages = 0;
  for (const ProcessStat* p : TreeOf(table, programs)) {
    ticks += p->ticks;
    pages += p->rss_pages;
  }
  ProcessUsage sample;
  int64_t now = clock_.NowMillis();
  if (last_ticks_ >= 0 && now > last_time_ms_) {
    double seconds = (now - last_time_ms_) / 1000.0;
    sample.cpu_percent = std::max<double>(0, ticks - last_ticks_) / sysconf(_SC_CLK_TCK) / seconds * 100.0;
  }
  last_ticks_ = ticks;
  last_time_ms_ = now;
  sample.rss_bytes = pages * sysconf(_SC_PAGESIZE);
  if (!visible_gpus_.empty()) {
    if (now - last_gpu_ms_ >= 5000) SampleGpus();
    sample.gpu_util_percent = gpu_util_;
    sample.gpu_memory_bytes = gpu_memory_;
  }
  return sample;
}

void ProcfsSampler::SampleGpus() {
  last_gpu_ms_ = clock_.NowMillis();
  if (access("/usr/bin/nvidia-smi", X_OK) != 0) return;
  for (char c : visible_gpus_) {
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != ',') return;  // only device indices go to the shell
  }
  std::string command = "/usr/bin/nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader,nounits -i " +
                        visible_gpus_ + " 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return;
  double util_sum = 0, memory_mib = 0;
  int gpus = 0;
  char line[256];
  while (fgets(line, sizeof line, pipe)) {
    double util = 0, memory = 0;
    if (std::sscanf(line, "%lf, %lf", &util, &memory) == 2) {
      util_sum += util;
      memory_mib += memory;
      ++gpus;
    }
  }
  pclose(pipe);
  if (gpus == 0) return;
  gpu_util_ = util_sum / gpus;
  gpu_memory_ = static_cast<int64_t>(memory_mib * 1024 * 1024);
}

CgroupSampler::CgroupSampler(const Clock& clock, std::string visible_gpus, CgroupGroup group)
    : clock_(clock), gpus_(clock, std::move(visible_gpus)), group_(std::move(group)) {}

ProcessUsage CgroupSampler::Sample(const std::vector<pid_t>& programs) {
  ProcessUsage usage = gpus_.Sample(programs);
  CgroupUsage counted = ReadUsage(group_);
  int64_t now = clock_.NowMillis();
  usage.rss_bytes = counted.memory_bytes;
  usage.rss_peak_bytes = counted.memory_peak_bytes;
  usage.cpu_percent = 0;
  if (last_cpu_ns_ >= 0 && now > last_time_ms_) {
    usage.cpu_percent = 100.0 * static_cast<double>(counted.cpu_usage_ns - last_cpu_ns_) / 1e6 / (now - last_time_ms_);
  }
  last_cpu_ns_ = counted.cpu_usage_ns;
  last_time_ms_ = now;
  return usage;
}

}  // namespace shoal
