#include "collective/allreduce.h"

#include "collective/hierarchical.h"
#include "collective/host_leaders.h"
#include "collective/recursive_doubling.h"
#include "collective/ring.h"
#include "collective/single_host.h"

namespace shoal::collective {

Status Allreduce(Communicator& comm, void* data, size_t count, DataType type, ReduceOp op,
                 AllreduceAlgorithm algorithm) {
  const size_t bytes = count * ElementSize(type);
  return comm.Run("allreduce", bytes, [&]() -> Status {
    if (comm.size() == 1 || count == 0) return Status::Ok();
    if (algorithm == AllreduceAlgorithm::kAuto && comm.AllRanksShareTheArena() &&
        bytes <= comm.options().single_host_allreduce_bytes)
      algorithm = AllreduceAlgorithm::kSingleHost;
    if (algorithm == AllreduceAlgorithm::kSingleHost && comm.AllRanksShareTheArena())
      return SingleHostAllreduce(comm, static_cast<char*>(data), count, type, op);
    if (algorithm == AllreduceAlgorithm::kAuto) {
      bool small = bytes <= comm.options().small_allreduce_bytes || count < static_cast<size_t>(comm.size());
      algorithm = !small ? AllreduceAlgorithm::kHierarchical
                  : HostLeadersApply(comm, bytes) ? AllreduceAlgorithm::kHostLeaders
                                                  : AllreduceAlgorithm::kRecursiveDoubling;
    }
    if (algorithm == AllreduceAlgorithm::kHostLeaders) {
      if (HostLeadersApply(comm, bytes)) return HostLeadersAllreduce(comm, static_cast<char*>(data), count, type, op);
      algorithm = AllreduceAlgorithm::kRecursiveDoubling;
    }
    if (algorithm == AllreduceAlgorithm::kRecursiveDoubling)
      return RecursiveDoublingAllreduce(comm, data, count, type, op);
    if (algorithm == AllreduceAlgorithm::kHierarchical) {
      const HostLayout layout = HierarchicalLayout(comm);
      if (!layout.hosts.empty()) return HierarchicalAllreduce(comm, layout, static_cast<char*>(data), count, type, op);
    }
    RingPlan plan;
    plan.data = static_cast<char*>(data);
    plan.type = type;
    plan.op = op;
    plan.offsets = BalancedOffsets(count, comm.size());
    return RunRing(comm, plan);
  });
}

}  // namespace shoal::collective
