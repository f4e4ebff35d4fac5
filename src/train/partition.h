// Partitioning: which records each worker and each replica (solver thread) reads.
//
// Training: R = workers x devices replicas; replica g = worker * devices + device owns the
// contiguous shard [g*S, (g+1)*S) with S = floor(N / R), so a worker's partition is the
// contiguous range of its devices' shards and the same replica index reads the same
// records whatever the split of R into workers and devices. Every replica takes
// floor(S / batch) steps per epoch (the last S mod batch records of a shard wait for no
// one); at step t the replica reads its shard from (t mod steps) * batch.
//
// Evaluation (-test, -features): worker w reads [w*N/W, (w+1)*N/W): every record once.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

#include "common/status.h"

namespace shoal::train {

struct TrainLayout {
  int64_t records = 0;
  int replicas = 0;
  int64_t shard = 0;            // records per replica
  int64_t steps_per_epoch = 0;
  int64_t batch = 0;
  int devices = 0;
  // The worker's contiguous range [begin, end).
  int64_t WorkerBegin(int worker) const { return static_cast<int64_t>(worker) * devices * shard; }
  int64_t WorkerEnd(int worker) const { return WorkerBegin(worker + 1); }
  // The first record replica g reads at iteration `iter`.
  int64_t BatchStart(int replica, int64_t iter) const {
    return replica * shard + (iter % steps_per_epoch) * batch;
  }
};

// kInvalidArgument when a shard cannot hold one batch.
Result<TrainLayout> MakeTrainLayout(int64_t records, int workers, int devices, int64_t batch);

struct Range {
  int64_t begin = 0, end = 0;
};
Range EvalRange(int64_t records, int workers, int worker);

}  // namespace shoal::train
