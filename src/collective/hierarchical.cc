#include "collective/hierarchical.h"

#include <algorithm>

#include "collective/reduce.h"
#include "collective/ring.h"

namespace shoal::collective {

HostLayout HierarchicalLayout(const Communicator& comm) {
  HostLayout layout;
  for (int r = 0; r < comm.size(); ++r) {
    const size_t host = static_cast<size_t>(comm.host(r));
    if (host >= layout.hosts.size()) layout.hosts.resize(host + 1);
    if (r == comm.rank()) {
      layout.host = static_cast<int>(host);
      layout.local = static_cast<int>(layout.hosts[host].size());
    }
    layout.hosts[host].push_back(r);
  }
  const size_t local = layout.hosts.empty() ? 0 : layout.hosts[0].size();
  const bool applies = layout.hosts.size() >= 2 && local >= 2 &&
                       std::all_of(layout.hosts.begin(), layout.hosts.end(),
                                   [&](const std::vector<int>& h) { return h.size() == local; });
  return applies ? layout : HostLayout{};
}

Status HierarchicalAllreduce(Communicator& comm, const HostLayout& layout, char* data, size_t count, DataType type,
                             ReduceOp op) {
  const std::vector<int>& mine = layout.hosts[layout.host];
  const int l = static_cast<int>(mine.size());
  const size_t elem = ElementSize(type);
  const ReduceOp phase_op = op == ReduceOp::kAverage ? ReduceOp::kSum : op;

  // 1. Reduce-scatter within the host: local index i owns shard (i + 1) mod l.
  RingPlan local;
  local.data = data;
  local.type = type;
  local.op = phase_op;
  local.offsets = BalancedOffsets(count, l);
  local.members = mine;
  local.allgather = false;
  RETURN_IF_ERROR(RunRing(comm, local));

  // 2. Allreduce of the owned shard across hosts, among the ranks of this local index.
  const int shard = (layout.local + 1) % l;
  const size_t begin = local.offsets[shard], elems = local.offsets[shard + 1] - begin;
  RingPlan across;
  across.data = data + begin * elem;
  across.type = type;
  across.op = phase_op;
  for (const auto& host : layout.hosts) across.members.push_back(host[layout.local]);
  across.offsets = BalancedOffsets(elems, static_cast<int>(across.members.size()));
  RETURN_IF_ERROR(RunRing(comm, across));
  if (op == ReduceOp::kAverage) Scale(type, across.data, elems, comm.size());

  // 3. Allgather within the host.
  local.reduce_scatter = false;
  local.allgather = true;
  return RunRing(comm, local);
}

}  // namespace shoal::collective
