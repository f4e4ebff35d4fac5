#include "master/task_state.h"

namespace shoal {

const char* Name(TaskState state) {
  switch (state) {
    case TaskState::kPending: return "PENDING";
    case TaskState::kLaunching: return "LAUNCHING";
    case TaskState::kRegistered: return "REGISTERED";
    case TaskState::kRunning: return "RUNNING";
    case TaskState::kSucceeded: return "SUCCEEDED";
    case TaskState::kFailed: return "FAILED";
    case TaskState::kKilled: return "KILLED";
    case TaskState::kLost: return "LOST";
  }
  return "UNKNOWN";
}

const char* Name(AttemptState state) {
  switch (state) {
    case AttemptState::kStarting: return "STARTING";
    case AttemptState::kRunning: return "RUNNING";
    case AttemptState::kSucceeded: return "SUCCEEDED";
    case AttemptState::kFailed: return "FAILED";
    case AttemptState::kKilled: return "KILLED";
  }
  return "UNKNOWN";
}

const char* Name(JobState state) {
  switch (state) {
    case JobState::kQueued: return "QUEUED";
    case JobState::kRunning: return "RUNNING";
    case JobState::kSucceeded: return "SUCCEEDED";
    case JobState::kFailed: return "FAILED";
    case JobState::kKilled: return "KILLED";
  }
  return "UNKNOWN";
}

std::optional<JobState> ParseJobState(const std::string& name) {
  for (JobState s : {JobState::kQueued, JobState::kRunning, JobState::kSucceeded, JobState::kFailed, JobState::kKilled}) {
    if (name == Name(s)) return s;
  }
  return std::nullopt;
}

std::optional<TaskState> ParseTaskState(const std::string& name) {
  for (int i = 0; i <= static_cast<int>(TaskState::kLost); ++i) {
    if (name == Name(static_cast<TaskState>(i))) return static_cast<TaskState>(i);
  }
  return std::nullopt;
}

bool IsFinal(TaskState s) {
  return s == TaskState::kSucceeded || s == TaskState::kFailed || s == TaskState::kKilled || s == TaskState::kLost;
}
bool IsFinal(AttemptState s) { return s == AttemptState::kSucceeded || s == AttemptState::kFailed || s == AttemptState::kKilled; }
bool IsFinal(JobState s) { return s == JobState::kSucceeded || s == JobState::kFailed || s == JobState::kKilled; }

bool CanMove(TaskState from, TaskState to) {
  if (IsFinal(from)) return false;
  if (to == TaskState::kFailed || to == TaskState::kKilled || to == TaskState::kLost) return true;
  if (to == TaskState::kSucceeded) return from == TaskState::kRunning;
  return static_cast<int>(to) == static_cast<int>(from) + 1;
}

}  // namespace shoal
