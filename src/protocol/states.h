// The states and modes that cross process boundaries, with one name table each.
//
//   task:    PENDING -> LAUNCHING -> REGISTERED -> RUNNING -> SUCCEEDED | FAILED | KILLED | LOST
//   attempt: STARTING -> RUNNING -> SUCCEEDED | FAILED | KILLED
//   job:     QUEUED -> RUNNING -> SUCCEEDED | FAILED | KILLED (RUNNING -> QUEUED to retry)
//   input mode: download | placeholder | stream (docs/data.md)
//   saved model: requested -> uploading -> saved | failed
//
// Contract:
//  - Name(x) is the wire and display name (upper case for states, lower case for modes);
//    Parse<E>(text) is its inverse and returns nullopt for any other text, so no state
//    or mode is ever compared as a string.
//  - The legal task moves live in master/task_state.h.
// Thread-safety: pure functions over constant tables.
#pragma once

#include <optional>
#include <string_view>

namespace shoal {

enum class TaskState { kPending, kLaunching, kRegistered, kRunning, kSucceeded, kFailed, kKilled, kLost };
// kPreempted: stopped by the scheduler for a job of a queue below its guarantee; the job
// went back to its queue, and the attempt does not count against max_attempts.
enum class AttemptState { kStarting, kRunning, kSucceeded, kFailed, kKilled, kPreempted };
enum class JobState { kQueued, kRunning, kSucceeded, kFailed, kKilled };
enum class InputMode { kDownload, kPlaceholder, kStream };
enum class SaveState { kRequested, kUploading, kSaved, kFailed };

const char* Name(TaskState state);
const char* Name(AttemptState state);
const char* Name(JobState state);
const char* Name(InputMode mode);
const char* Name(SaveState state);

// Parse<TaskState>("RUNNING") == TaskState::kRunning; nullopt for any text not in the table.
template <typename E>
std::optional<E> Parse(std::string_view name);

// Every name of E, in the table's order, joined by ", " (for error messages).
template <typename E>
const char* NameList();

bool IsFinal(TaskState state);
bool IsFinal(AttemptState state);
bool IsFinal(JobState state);

}  // namespace shoal
