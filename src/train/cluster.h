// Cluster: where this worker stands among the workers of one `shoal train` run, and the
// communicator that sums their gradients.
//
// Contract:
//  - In a Shoal job (framework shoal-train) the variables SHOAL_RANK, SHOAL_WORLD_SIZE,
//    SHOAL_HOST, SHOAL_PORT, SHOAL_JOB_ID, SHOAL_ATTEMPT and SHOAL_TRAIN_MASTER (rank 0's
//    host:port) place the worker: rank 0 serves the rendezvous store over HTTP on its
//    reserved port and every worker connects to it, under the prefix
//    "<job>/attempt-<n>", then the workers build a TCP communicator.
//  - By hand (outside a Shoal job): -clusterSize N -rank R -rendezvous DIR uses a file
//    store in DIR. Inside a job -clusterSize only restates the job's size (train_flags.h).
//  - Alone (no job, no -clusterSize, or one worker): rank 0 of 1 and no communicator.
// Ownership: Cluster owns the store, the HTTP server (rank 0) and the communicator.
// Thread-safety: one thread uses the communicator.
#pragma once

#include <memory>
#include <string>

#include "collective/communicator.h"
#include "common/status.h"
#include "train/train_flags.h"

namespace shoal::train {

struct ClusterPlace {
  int rank = 0;
  int size = 1;
  int local_workers = 1;  // workers of this run on this host (shares its cores)
};

// The worker count of the Shoal job this process runs in (SHOAL_TRAIN_MASTER set), 0 outside one.
int ShoalJobWorkers();

class Cluster {
 public:
  static Result<std::unique_ptr<Cluster>> Join(const TrainFlags& flags);
  ~Cluster();
  const ClusterPlace& place() const { return place_; }
  // nullptr for a single worker.
  collective::Communicator* comm() { return comm_.get(); }

 private:
  struct Impl;
  Cluster();
  ClusterPlace place_;
  std::unique_ptr<Impl> impl_;
  std::unique_ptr<collective::Communicator> comm_;
};

}  // namespace shoal::train
