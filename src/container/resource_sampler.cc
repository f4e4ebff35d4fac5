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

ProcessUsage ProcfsSampler::Sample(const std::vector<pid_t>& programs) {
  // The programs are this agent's children, and it is their subreaper: all of them are below it.
  std::vector<ProcessStat> table = ReadProcessTableBelow(getpid());
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
  gpus_.Fill(sample);
  return sample;
}

void GpuSampler::Fill(ProcessUsage& usage) {
  if (visible_gpus_.empty()) return;
  if (clock_.NowMillis() - last_ms_ >= 5000) Ask();
  usage.gpu_util_percent = util_;
  usage.gpu_memory_bytes = memory_;
}

void GpuSampler::Ask() {
  last_ms_ = clock_.NowMillis();
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
  util_ = util_sum / gpus;
  memory_ = static_cast<int64_t>(memory_mib * 1024 * 1024);
}

ProcessUsage CgroupSampler::Sample(const std::vector<pid_t>&) {
  ProcessUsage usage;
  gpus_.Fill(usage);
  CgroupUsage counted = ReadUsage(group_);
  int64_t now = clock_.NowMillis();
  usage.rss_bytes = counted.memory_bytes;
  usage.rss_peak_bytes = counted.memory_peak_bytes;
  if (last_cpu_ns_ >= 0 && now > last_time_ms_) {
    usage.cpu_percent = 100.0 * static_cast<double>(counted.cpu_usage_ns - last_cpu_ns_) / 1e6 / (now - last_time_ms_);
  }
  last_cpu_ns_ = counted.cpu_usage_ns;
  last_time_ms_ = now;
  return usage;
}

}  // namespace shoal
