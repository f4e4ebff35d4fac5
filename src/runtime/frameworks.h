// The framework adapters Shoal ships; registry.cc lists them by name.
#pragma once

#include "runtime/framework.h"

namespace shoal {

class GenericFramework final : public FrameworkAdapter {
 public:
  std::string name() const override { return "generic"; }
  bool RunsSeveralProcessesPerTask() const override { return true; }
  EnvMap TaskEnvironment(const JobSpec& spec, const ClusterView& cluster, const TaskEndpoint& self) const override;
};

class PyTorchFramework final : public FrameworkAdapter {
 public:
  std::string name() const override { return "pytorch"; }
  bool RunsSeveralProcessesPerTask() const override { return true; }
  EnvMap TaskEnvironment(const JobSpec& spec, const ClusterView& cluster, const TaskEndpoint& self) const override;
  EnvMap ProcessEnvironment(const ClusterView& cluster, const TaskEndpoint& self, int local_rank) const override;
};

class TensorFlowFramework final : public FrameworkAdapter {
 public:
  std::string name() const override { return "tensorflow"; }
  EnvMap TaskEnvironment(const JobSpec& spec, const ClusterView& cluster, const TaskEndpoint& self) const override;
};

class MxNetFramework final : public FrameworkAdapter {
 public:
  std::string name() const override { return "mxnet"; }
  EnvMap TaskEnvironment(const JobSpec& spec, const ClusterView& cluster, const TaskEndpoint& self) const override;
};

class XgboostFramework final : public FrameworkAdapter {
 public:
  std::string name() const override { return "xgboost"; }
  bool NeedsRabitTracker() const override { return true; }
  EnvMap TaskEnvironment(const JobSpec& spec, const ClusterView& cluster, const TaskEndpoint& self) const override;
};

class MpiFramework final : public FrameworkAdapter {
 public:
  std::string name() const override { return "mpi"; }
  bool LaunchesWithMpirun() const override { return true; }
  bool RunsSeveralProcessesPerTask() const override { return true; }
  EnvMap TaskEnvironment(const JobSpec& spec, const ClusterView& cluster, const TaskEndpoint& self) const override;
};

class ShoalTrainFramework final : public FrameworkAdapter {
 public:
  std::string name() const override { return "shoal-train"; }
  EnvMap TaskEnvironment(const JobSpec& spec, const ClusterView& cluster, const TaskEndpoint& self) const override;
};

}  // namespace shoal
