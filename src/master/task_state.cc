#include "master/task_state.h"

namespace shoal {

bool CanMove(TaskState from, TaskState to) {
  if (IsFinal(from)) return false;
  if (to == TaskState::kFailed || to == TaskState::kKilled || to == TaskState::kLost) return true;
  if (to == TaskState::kSucceeded) return from == TaskState::kRunning;
  return static_cast<int>(to) == static_cast<int>(from) + 1;
}

}  // namespace shoal
