// Allreduce: every rank ends with the element-wise reduction of all ranks' buffers.
//
// Algorithm choice (by bytes = count * element size, options in communicator.h):
//   every rank on this host with a shared arena, and bytes <= single_host_allreduce_bytes:
//       the single-host allreduce (single_host.h);
//   bytes <= small_allreduce_bytes, or fewer elements than ranks:
//       several hosts, one of them with several ranks: the host-leaders allreduce
//       (host_leaders.h); otherwise recursive doubling (ceil(log2 n) rounds of
//       whole-buffer exchange).
//   otherwise, ranks on several hosts with several ranks each (the same number on
//       every host): the hierarchical allreduce (hierarchical.h);
//   otherwise: the chunked, pipelined ring (reduce-scatter then allgather).
// Contract: in place on `data` (count elements of `type`). Every rank gets
// bitwise-identical results. See communicator.h for timeouts and failure.
// Thread-safety: one thread per communicator.
#pragma once

#include <span>

#include "collective/communicator.h"

namespace shoal::collective {

// kHierarchical falls back to the ring where its layout does not apply, kSingleHost
// to the ring where the ranks do not all share an arena, and kHostLeaders to
// recursive doubling where it does not apply.
enum class AllreduceAlgorithm { kAuto, kRing, kRecursiveDoubling, kHierarchical, kSingleHost, kHostLeaders };

Status Allreduce(Communicator& comm, void* data, size_t count, DataType type, ReduceOp op,
                 AllreduceAlgorithm algorithm = AllreduceAlgorithm::kAuto);

template <typename T>
Status Allreduce(Communicator& comm, std::span<T> data, ReduceOp op,
                 AllreduceAlgorithm algorithm = AllreduceAlgorithm::kAuto) {
  return Allreduce(comm, data.data(), data.size(), DataTypeOf<T>::value, op, algorithm);
}

}  // namespace shoal::collective
