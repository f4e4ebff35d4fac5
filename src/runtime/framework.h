// Framework adapters: what each framework's launcher would give its processes.
//
// Contract:
//  - An adapter validates the roles a framework allows (before anything starts) and,
//    given the ClusterView, returns the variables one task needs. It never touches the OS.
//  - TaskEnvironment returns the whole contract for the task: Shoal's own variables
//    (SHOAL_JOB_ID ... SHOAL_AM_ADDR, SHOAL_PORT, CUDA_VISIBLE_DEVICES) plus the
//    framework's. They are applied after the job's and role's env, so they win.
//  - FindFramework returns nullptr for an unknown name; KnownFrameworks lists the names.
// Thread-safety: adapters are stateless singletons, safe from any thread.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "runtime/cluster_view.h"
#include "spec/job_spec.h"
#include "spec/spec_issue.h"

namespace shoal {

using EnvMap = std::map<std::string, std::string>;

class FrameworkAdapter {
 public:
  virtual ~FrameworkAdapter() = default;
  virtual std::string name() const = 0;
  // The spec's issues this framework would meet at run time: nproc_per_node above 1 for a
  // framework that runs one process per task (its cluster description has one place per task).
  std::vector<SpecIssue> Validate(const JobSpec& spec) const;
  // Whether a task may run several processes (nproc_per_node): each gets its local rank.
  virtual bool RunsSeveralProcessesPerTask() const { return false; }
  // Whether the AM must serve a Rabit tracker (ClusterView::services[kRabitTrackerService]).
  virtual bool NeedsRabitTracker() const { return false; }
  // Whether the AM starts the ranks with mpirun through the containers (master/mpi_launch.h).
  virtual bool LaunchesWithMpirun() const { return false; }
  virtual EnvMap TaskEnvironment(const JobSpec& spec, const ClusterView& cluster, const TaskEndpoint& self) const = 0;
  // What differs between the processes of one task (nproc_per_node > 1), applied over the
  // task's environment: SHOAL_LOCAL_RANK and SHOAL_LOCAL_WORLD_SIZE, and the framework's.
  virtual EnvMap ProcessEnvironment(const ClusterView& cluster, const TaskEndpoint& self, int local_rank) const;
};

const FrameworkAdapter* FindFramework(const std::string& name);
std::vector<std::string> KnownFrameworks();

// Shoal's own variables for one task; every adapter starts from these.
EnvMap ShoalEnvironment(const JobSpec& spec, const ClusterView& cluster, const TaskEndpoint& self);

}  // namespace shoal
