// The framework adapters Shoal ships; registry.cc lists them by name.
#pragma once

#include "runtime/framework.h"

namespace shoal {

class GenericFramework final : public FrameworkAdapter {
 public:
  std::string name() const override { return "generic"; }
  EnvMap TaskEnvironment(const JobSpec& spec, const ClusterView& cluster, const TaskEndpoint& self) const override;
};

class PyTorchFramework final : public FrameworkAdapter {
 public:
  std::string name() const override { return "pytorch"; }
  EnvMap TaskEnvironment(const JobSpec& spec, const ClusterView& cluster, const TaskEndpoint& self) const override;
};

}  // namespace shoal
