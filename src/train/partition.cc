#include "train/partition.h"

namespace shoal::train {

Result<TrainLayout> MakeTrainLayout(int64_t records, int workers, int devices, int64_t batch) {
  TrainLayout layout;
  layout.records = records;
  layout.replicas = workers * devices;
  layout.devices = devices;
  layout.batch = batch;
  layout.shard = layout.replicas > 0 ? records / layout.replicas : 0;
  layout.steps_per_epoch = batch > 0 ? layout.shard / batch : 0;
  if (layout.steps_per_epoch < 1) {
    return InvalidArgument("the training source has " + std::to_string(records) + " records: too few for " +
                           std::to_string(layout.replicas) + " replicas (" + std::to_string(workers) + " workers x " +
                           std::to_string(devices) + " devices) of batch_size " + std::to_string(batch));
  }
  return layout;
}

Range EvalRange(int64_t records, int workers, int worker) {
  return {records * worker / workers, records * (worker + 1) / workers};
}

}  // namespace shoal::train
