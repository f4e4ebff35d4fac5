// Checkpoints Shoal manages (docs/checkpoints.md): a task's checkpoint folder is kept in
// storage in rounds, restored before every attempt after the first, and uploaded each time
// the program marks it complete.
//
// Layout: <checkpoint uri>/<job id>/<role>-<index>/<round, 8 digits>/, each round a folder
// committed as an output is (data/output_commit.h): complete once its _SUCCESS exists.
//
// Contract:
//  - The program writes its checkpoint's files into its folder (SHOAL_CHECKPOINT_DIR), then
//    creates the empty file kCheckpointMarker there (SHOAL_CHECKPOINT_MARKER names it).
//    Shoal copies the folder (less the marker) aside, deletes the marker (from then on the
//    program may write the next checkpoint) and uploads the copy as the next round. A
//    marker that appears while a round uploads is taken when that upload ends.
//  - After each round, rounds beyond the newest `keep` complete ones are deleted, and so
//    are unfinished rounds older than the newest complete one.
//  - The round an attempt resumes from is chosen once per attempt, by the AM, before any
//    task starts (PrepareResume): the newest round every checkpointing task of the job has
//    complete, so that the tasks of a gang resume from the same point. Rounds after it
//    are deleted then (they are a future the new attempt does not share); its tasks
//    restore that round (Restore) and number their next rounds after it.
//  - Finish (after the program ended) takes a marked checkpoint not yet taken (the one a
//    preempted program wrote in its grace period) and waits for every upload.
//  - Errors name the URI and the round. Notes (one line per round uploaded or failed) are
//    for the task's log.
// Thread-safety: TaskCheckpoints' methods are called from one thread; uploads run on a
// thread of their own.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "spec/job_spec.h"
#include "storage/storage.h"

namespace shoal::data {

inline constexpr const char* kCheckpointMarker = "_COMPLETE";

// The complete and the present (complete or not) rounds of each task under a job's root.
struct TaskRounds {
  std::set<int> complete;
  std::set<int> present;
};
using JobRounds = std::map<std::string, TaskRounds>;  // by "<role>-<index>"

// <uri>/<job id>: where a job's checkpoints are, for one checkpoint URI.
std::string CheckpointRoot(const std::string& uri, const std::string& job_id);
// A round's folder name: 8 digits.
std::string RoundName(int round);
// Reads every task's rounds under a job's root (an empty map when there is none).
Result<JobRounds> ListRounds(storage::Storage& store, const std::string& root);
// The newest round complete for every task listed (0 when there is none).
int CommonRound(const JobRounds& rounds);
// The rounds of one task to delete once `newest` is complete: beyond the newest `keep`
// complete ones, and unfinished ones older than the newest complete one.
std::vector<int> RoundsToPrune(const TaskRounds& rounds, int keep);

// For the AM: before an attempt after the first, picks the round its tasks resume from
// (CommonRound over every checkpointing task of the job, whatever their URIs) and deletes
// the rounds after it. Returns 0 when the job has no complete common round.
Result<int> PrepareResume(const JobSpec& spec, const std::string& job_id);

class TaskCheckpoints {
 public:
  // task_uri: <root>/<role>-<index>; folder: the task's checkpoint folder (absolute);
  // staging: a scratch folder outside it, for the copies being uploaded.
  TaskCheckpoints(CheckpointSpec spec, std::string task_uri, std::string folder, std::string staging);
  ~TaskCheckpoints();
  TaskCheckpoints(const TaskCheckpoints&) = delete;
  TaskCheckpoints& operator=(const TaskCheckpoints&) = delete;

  // Before the program starts: downloads `round` (0: none) into the folder (made, 0700),
  // and sets SHOAL_CHECKPOINT_DIR and SHOAL_CHECKPOINT_MARKER.
  Status Restore(int round, std::map<std::string, std::string>& env);
  // While the program runs: takes a marked checkpoint when no upload is running.
  void Poll();
  // After the program ended: takes a marked checkpoint not yet taken, waits for the
  // uploads; returns the latest round's error (OK when it uploaded, or none was taken).
  Status Finish();
  // Lines for the task's log since the last call.
  std::vector<std::string> TakeNotes();

 private:
  // Copies the folder aside and starts its upload as round next_round_.
  void Take();
  void Upload(int round, std::string copy);
  void Note(const std::string& line);

  CheckpointSpec spec_;
  std::string task_uri_;
  std::string folder_;
  std::string staging_;
  int next_round_ = 1;
  std::thread uploader_;
  std::atomic<bool> uploading_{false};
  std::mutex mu_;
  std::vector<std::string> notes_;  // GUARDED_BY(mu_)
  Status last_error_;               // GUARDED_BY(mu_): the latest upload's
};

}  // namespace shoal::data
