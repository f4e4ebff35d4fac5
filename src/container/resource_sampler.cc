#include "container/resource_sampler.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <unordered_map>
#include <unordered_set>
#include <vector>
#include <fstream>
#include <sstream>
#include <string>

namespace shoal {
namespace {

struct ProcessStat {
  pid_t pid = 0;
  pid_t ppid = 0;
  pid_t pgid = 0;
  int64_t ticks = 0;  // utime + stime
  int64_t rss_pages = 0;
};

bool ReadStat(const char* pid, ProcessStat* out) {
  std::ifstream file(std::string("/proc/") + pid + "/stat");
  std::string text;
  if (!std::getline(file, text)) return false;
  size_t close = text.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos || close + 2 > text.size()) return false;
  std::istringstream fields(text.substr(close + 2));
  std::string state;
  long long ppid, group, skip, utime, stime, rss;
  fields >> state >> ppid >> group;
  for (int i = 0; i < 8; ++i) fields >> skip;  // session tty tpgid flags minflt cminflt majflt cmajflt
  fields >> utime >> stime;
  for (int i = 0; i < 8; ++i) fields >> skip;  // cutime cstime priority nice threads itrealvalue starttime vsize
  fields >> rss;
  if (!fields) return false;
  *out = {static_cast<pid_t>(std::atoll(pid)), static_cast<pid_t>(ppid), static_cast<pid_t>(group), utime + stime, rss};
  return true;
}

std::vector<ProcessStat> AllProcesses() {
  std::vector<ProcessStat> all;
  if (DIR* proc = opendir("/proc")) {
    while (dirent* entry = readdir(proc)) {
      if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
      ProcessStat stat;
      if (ReadStat(entry->d_name, &stat)) all.push_back(stat);
    }
    closedir(proc);
  }
  return all;
}

}  // namespace

ProcfsSampler::ProcfsSampler(const Clock& clock, std::string visible_gpus)
    : clock_(clock), visible_gpus_(std::move(visible_gpus)) {}

ResourceSample ProcfsSampler::Sample(const std::vector<pid_t>& programs) {
  std::vector<ProcessStat> all = AllProcesses();
  std::unordered_map<pid_t, std::vector<const ProcessStat*>> children;
  for (const auto& p : all) children[p.ppid].push_back(&p);
  std::unordered_set<pid_t> counted;
  int64_t ticks = 0, pages = 0;
  auto count = [&](const ProcessStat& p) {
    if (!counted.insert(p.pid).second) return false;
    ticks += p.ticks;
    pages += p.rss_pages;
    return true;
  };
  std::vector<const ProcessStat*> todo;
  for (const auto& p : all) {
    for (pid_t pid : programs) {
      if (p.pid == pid || p.pgid == pid) todo.push_back(&p);
    }
  }
  while (!todo.empty()) {
    const ProcessStat* p = todo.back();
    todo.pop_back();
    if (!count(*p)) continue;
    for (const ProcessStat* child : children[p->pid]) todo.push_back(child);
  }
  ResourceSample sample;
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

}  // namespace shoal
