// ManagedCheckpoint: `shoal train`'s side of the checkpoints Shoal manages
// (docs/checkpoints.md), and of preemption.
//
// Contract:
//  - Inside a task with a checkpoint (SHOAL_CHECKPOINT_DIR set), the leader's snapshots
//    are published there too: Publish waits until Shoal has taken the previous one (its
//    marker gone, at most kMarkerWaitMs), writes the snapshot's files, removes the
//    snapshots it published before, then creates the marker SHOAL_CHECKPOINT_MARKER names.
//  - NewestSnapshot is the .solverstate of the highest iteration in the folder ("" when
//    none, or outside such a task): what a retried or preempted job resumes from.
//  - While a StopOnSignals lives (the training loop), SIGINT and SIGTERM set
//    StopRequested() instead of ending the process: the trainer then snapshots at the next
//    iteration every worker agrees on, and ends (Caffe's default, sigint_effect stop); the
//    process exits 128 + StopSignal(). A second signal ends the process at once, and so
//    does one outside the training loop (nothing to snapshot there).
// Thread-safety: StopRequested and StopSignal from any thread (a signal handler sets
// them); the rest from the trainer's main thread.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace shoal::train {

inline constexpr int64_t kMarkerWaitMs = 300'000;

class ManagedCheckpoint {
 public:
  // Reads SHOAL_CHECKPOINT_DIR and SHOAL_CHECKPOINT_MARKER.
  ManagedCheckpoint();
  bool enabled() const { return !folder_.empty(); }
  std::string NewestSnapshot() const;
  // files: (name within the folder, bytes), e.g. m_iter_100.caffemodel and its .solverstate.
  Status Publish(const std::vector<std::pair<std::string, std::string>>& files);

 private:
  std::string folder_;
  std::string marker_;
};

class StopOnSignals {
 public:
  StopOnSignals();
  ~StopOnSignals();
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;
};

bool StopRequested();
int StopSignal();               // the signal that requested the stop (0: none)
std::string StopSignalName();   // "SIGINT", "SIGTERM" ("" when none)

// Workers stop together: each adds its vote to a sum every worker sees. A vote is 0 (no
// stop asked), 1 (SIGINT) or 1024 (SIGTERM), so a sum of up to 16,383 votes is exact in
// a float and names the signals in it; SignalOfVotes gives SIGTERM when any worker got
// it, else SIGINT, else 0.
float StopVote();
int SignalOfVotes(float sum);
// A stop another worker was asked for, taken as this process's own when it was asked for
// none (its name in the log, 128 + it as the exit status).
void AdoptStopSignal(int signal);

}  // namespace shoal::train
