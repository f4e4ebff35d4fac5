// Task and attempt states, and the legal moves between them.
//
//   task:    PENDING -> LAUNCHING -> REGISTERED -> RUNNING -> SUCCEEDED | FAILED | KILLED | LOST
//            (any non-final state may also go straight to FAILED, KILLED or LOST)
//   attempt: STARTING -> RUNNING -> SUCCEEDED | FAILED | KILLED
//   job:     QUEUED -> RUNNING -> SUCCEEDED | FAILED | KILLED (RUNNING -> QUEUED to retry)
//
// Contract: CanMove says whether a task move is legal; a final state never changes.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>

namespace shoal {

enum class TaskState { kPending, kLaunching, kRegistered, kRunning, kSucceeded, kFailed, kKilled, kLost };
enum class AttemptState { kStarting, kRunning, kSucceeded, kFailed, kKilled };
enum class JobState { kQueued, kRunning, kSucceeded, kFailed, kKilled };

const char* Name(TaskState state);
const char* Name(AttemptState state);
const char* Name(JobState state);
std::optional<JobState> ParseJobState(const std::string& name);
std::optional<TaskState> ParseTaskState(const std::string& name);

bool IsFinal(TaskState state);
bool IsFinal(AttemptState state);
bool IsFinal(JobState state);
bool CanMove(TaskState from, TaskState to);

}  // namespace shoal
