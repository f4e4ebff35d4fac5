#include "spec/fit.h"

#include <cstdio>

#include "common/units.h"

namespace shoal {
namespace {

std::string Number(double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", value);
  return buf;
}

}  // namespace

std::vector<SpecIssue> CheckFits(const JobSpec& spec, const ClusterCapacity& capacity) {
  std::vector<SpecIssue> issues;
  for (const auto& role : spec.roles) {
    const std::string prefix = "roles." + role.name;
    const Resources& need = role.resources;
    if (need.cpus > capacity.largest.cpus + 1e-9) {
      issues.push_back({prefix + ".cpus", "each task asks for " + Number(need.cpus) + " CPUs but the largest node has " +
                                              Number(capacity.largest.cpus),
                        "lower cpus to at most " + Number(capacity.largest.cpus)});
    }
    if (need.memory_bytes > capacity.largest.memory_bytes) {
      issues.push_back({prefix + ".memory", "each task asks for " + FormatMemory(need.memory_bytes) +
                                                " but the largest node has " + FormatMemory(capacity.largest.memory_bytes),
                        "lower memory to at most " + FormatMemory(capacity.largest.memory_bytes)});
    }
    if (need.gpus > capacity.largest.gpus) {
      issues.push_back({prefix + ".gpus", "each task asks for " + std::to_string(need.gpus) +
                                              " GPUs but the largest node has " + std::to_string(capacity.largest.gpus),
                        capacity.largest.gpus == 0 ? "remove gpus: this cluster has no GPUs"
                                                   : "lower gpus to at most " + std::to_string(capacity.largest.gpus)});
    }
  }
  if (!issues.empty()) return issues;
  Resources total = spec.TotalResources();
  if (!capacity.total.Fits(total)) {
    issues.push_back({"roles", "the job needs " + total.ToString() + " in all, more than the whole cluster has (" +
                                   capacity.total.ToString() + ")",
                      "lower instances, cpus, memory or gpus: a job starts only when all its tasks fit at once"});
  }
  return issues;
}

}  // namespace shoal
