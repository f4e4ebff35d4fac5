// Barrier: returns on a rank only after every rank has entered it.
//
// Algorithm: dissemination - in round k each rank sends a one-byte token to rank
// r + 2^k and waits for one from r - 2^k; ceil(log2 n) rounds.
// Thread-safety: one thread per communicator.
#pragma once

#include "collective/communicator.h"

namespace shoal::collective {

Status Barrier(Communicator& comm);

}  // namespace shoal::collective
