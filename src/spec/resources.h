// Resources: CPUs, memory and GPUs, as a task asks for them and as a cluster has them.
// Thread-safety: a value type.
#pragma once

#include <cstdint>
#include <string>

namespace shoal {

struct Resources {
  double cpus = 0;
  int64_t memory_bytes = 0;
  int gpus = 0;

  Resources& operator+=(const Resources& o) {
    cpus += o.cpus;
    memory_bytes += o.memory_bytes;
    gpus += o.gpus;
    return *this;
  }
  Resources& operator-=(const Resources& o) {
    cpus -= o.cpus;
    memory_bytes -= o.memory_bytes;
    gpus -= o.gpus;
    return *this;
  }
  Resources operator*(int n) const { return {cpus * n, memory_bytes * n, gpus * n}; }
  // True when every component of `need` fits in this.
  bool Fits(const Resources& need) const {
    return need.cpus <= cpus + 1e-9 && need.memory_bytes <= memory_bytes && need.gpus <= gpus;
  }
  // "2 CPUs, 4G memory, 1 GPU".
  std::string ToString() const;
};

}  // namespace shoal
