// The legal moves between task states (the states themselves: protocol/states.h).
//
//   task: PENDING -> LAUNCHING -> REGISTERED -> RUNNING -> SUCCEEDED | FAILED | KILLED | LOST
//         (any non-final state may also go straight to FAILED, KILLED or LOST)
//
// Contract: CanMove says whether a task move is legal; a final state never changes.
// Thread-safety: pure functions.
#pragma once

#include "protocol/states.h"

namespace shoal {

bool CanMove(TaskState from, TaskState to);

}  // namespace shoal
