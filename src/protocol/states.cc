#include "protocol/states.h"

#include <array>
#include <string>
#include <utility>

namespace shoal {
namespace {

template <typename E, size_t N>
using Table = std::array<std::pair<E, const char*>, N>;

constexpr Table<TaskState, 8> kTaskStates{{{TaskState::kPending, "PENDING"},
                                           {TaskState::kLaunching, "LAUNCHING"},
                                           {TaskState::kRegistered, "REGISTERED"},
                                           {TaskState::kRunning, "RUNNING"},
                                           {TaskState::kSucceeded, "SUCCEEDED"},
                                           {TaskState::kFailed, "FAILED"},
                                           {TaskState::kKilled, "KILLED"},
                                           {TaskState::kLost, "LOST"}}};
constexpr Table<AttemptState, 6> kAttemptStates{{{AttemptState::kStarting, "STARTING"},
                                                 {AttemptState::kRunning, "RUNNING"},
                                                 {AttemptState::kSucceeded, "SUCCEEDED"},
                                                 {AttemptState::kFailed, "FAILED"},
                                                 {AttemptState::kKilled, "KILLED"},
                                                 {AttemptState::kPreempted, "PREEMPTED"}}};
constexpr Table<JobState, 5> kJobStates{{{JobState::kQueued, "QUEUED"},
                                         {JobState::kRunning, "RUNNING"},
                                         {JobState::kSucceeded, "SUCCEEDED"},
                                         {JobState::kFailed, "FAILED"},
                                         {JobState::kKilled, "KILLED"}}};
constexpr Table<InputMode, 3> kInputModes{
    {{InputMode::kDownload, "download"}, {InputMode::kPlaceholder, "placeholder"}, {InputMode::kStream, "stream"}}};
constexpr Table<SaveState, 4> kSaveStates{{{SaveState::kRequested, "requested"},
                                           {SaveState::kUploading, "uploading"},
                                           {SaveState::kSaved, "saved"},
                                           {SaveState::kFailed, "failed"}}};

template <typename E, size_t N>
const char* NameIn(const Table<E, N>& table, E value) {
  for (const auto& [e, name] : table) {
    if (e == value) return name;
  }
  return "UNKNOWN";
}

template <typename E, size_t N>
std::optional<E> ParseIn(const Table<E, N>& table, std::string_view text) {
  for (const auto& [e, name] : table) {
    if (text == name) return e;
  }
  return std::nullopt;
}

template <typename E, size_t N>
std::string JoinNames(const Table<E, N>& table) {
  std::string out;
  for (const auto& [e, name] : table) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

}  // namespace

const char* Name(TaskState state) { return NameIn(kTaskStates, state); }
const char* Name(AttemptState state) { return NameIn(kAttemptStates, state); }
const char* Name(JobState state) { return NameIn(kJobStates, state); }
const char* Name(InputMode mode) { return NameIn(kInputModes, mode); }
const char* Name(SaveState state) { return NameIn(kSaveStates, state); }

template <> std::optional<TaskState> Parse<TaskState>(std::string_view n) { return ParseIn(kTaskStates, n); }
template <> std::optional<AttemptState> Parse<AttemptState>(std::string_view n) { return ParseIn(kAttemptStates, n); }
template <> std::optional<JobState> Parse<JobState>(std::string_view n) { return ParseIn(kJobStates, n); }
template <> std::optional<InputMode> Parse<InputMode>(std::string_view n) { return ParseIn(kInputModes, n); }
template <> std::optional<SaveState> Parse<SaveState>(std::string_view n) { return ParseIn(kSaveStates, n); }

template <> const char* NameList<TaskState>() { static const std::string s = JoinNames(kTaskStates); return s.c_str(); }
template <> const char* NameList<AttemptState>() { static const std::string s = JoinNames(kAttemptStates); return s.c_str(); }
template <> const char* NameList<JobState>() { static const std::string s = JoinNames(kJobStates); return s.c_str(); }
template <> const char* NameList<InputMode>() { static const std::string s = JoinNames(kInputModes); return s.c_str(); }
template <> const char* NameList<SaveState>() { static const std::string s = JoinNames(kSaveStates); return s.c_str(); }

bool IsFinal(TaskState s) {
  return s == TaskState::kSucceeded || s == TaskState::kFailed || s == TaskState::kKilled || s == TaskState::kLost;
}
bool IsFinal(AttemptState s) {
  return s == AttemptState::kSucceeded || s == AttemptState::kFailed || s == AttemptState::kKilled ||
         s == AttemptState::kPreempted;
}
bool IsFinal(JobState s) { return s == JobState::kSucceeded || s == JobState::kFailed || s == JobState::kKilled; }

}  // namespace shoal
