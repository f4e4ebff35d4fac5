#include "collective/host_leaders.h"

#include <algorithm>
#include <vector>

#include "collective/arena_reduce.h"
#include "collective/recursive_doubling.h"
#include "collective/reduce.h"

namespace shoal::collective {
namespace {

// The lowest rank of each host, in host order (hosts are numbered by their lowest rank).
std::vector<int> Leaders(const Communicator& comm) {
  std::vector<int> leaders;
  for (int r = 0; r < comm.size(); ++r)
    if (comm.host(r) == static_cast<int>(leaders.size())) leaders.push_back(r);
  return leaders;
}

}  // namespace

bool HostLeadersApply(const Communicator& comm, size_t bytes) {
  if (bytes > kHostLeadersMaxBytes) return false;
  std::vector<int> ranks_on_host(comm.size(), 0);
  int hosts = 0, most = 0;
  for (int r = 0; r < comm.size(); ++r) {
    const int h = comm.host(r);
    hosts = std::max(hosts, h + 1);
    most = std::max(most, ++ranks_on_host[h]);
  }
  return hosts >= 2 && most >= 2;
}

Status HostLeadersAllreduce(Communicator& comm, char* data, size_t count, DataType type, ReduceOp op) {
  const std::vector<int> leaders = Leaders(comm);
  transport::SharedArena* arena = comm.arena();  // null: alone on this host
  const bool leader = std::find(leaders.begin(), leaders.end(), comm.rank()) != leaders.end();
  const size_t bytes = count * ElementSize(type);
  if (arena) {
    const int gather = arena->NextHalf();
    if (!leader) CopyBytes(arena->Slot(gather, arena->local_index()), data, bytes);
    RETURN_IF_ERROR(comm.ArenaBarrier());
    if (leader) ReduceSlotsInOrder(*arena, gather, arena->local_index(), type, op, data, 0, count);
  }
  if (leader) RETURN_IF_ERROR(RecursiveDoublingAmong(comm, leaders, data, count, type, op));
  if (arena) {
    const int spread = arena->NextHalf();
    if (leader) CopyBytes(arena->Slot(spread, 0), data, bytes);
    RETURN_IF_ERROR(comm.ArenaBarrier());
    if (!leader) CopyBytes(data, arena->Slot(spread, 0), bytes);
  }
  return Status::Ok();
}

}  // namespace shoal::collective
