// Snapshots in Caffe's formats: the names of a snapshot's files and the .solverstate
// (SolverState) as Caffe's SGDSolver writes and reads it, so that Caffe resumes from
// Shoal's snapshots and Shoal from Caffe's.
//
// Contract:
//  - SnapshotBase: "<dir of -model>/<name>_iter_<N>", where <name> is the file name of
//    snapshot_prefix, else of -model without its extension (Shoal writes snapshots beside
//    the model). SnapshotFiles: its model and state files, "<base>.caffemodel" and
//    "<base>.solverstate", or Caffe's HDF5 names "<base>.caffemodel.h5" and
//    "<base>.solverstate.h5". LearnedNetPath: a model file's path as the state records it
//    (a local URI as a plain path, so Caffe can open it).
//  - MakeSolverStateProto writes Caffe's history: one BlobProto per parameter blob with
//    its own storage (`params`, Caffe's learnable_params_: shared blobs are left out), in
//    the net's order, with its shape; for a solver with a second history (AdaDelta, Adam)
//    a second set follows: all first histories, then all second ones. Shoal's data
//    position goes in the state's extension field (Caffe skips it).
//  - ReadHistories fills the flat history buffers from a state written by Caffe or Shoal
//    (per-blob histories, each blob's count checked) or by an older Shoal (one flat blob
//    per history, `total` values). Anything else is kInvalidArgument naming the file.
//  - LearnedNetCandidates: where a state's .caffemodel may be, in the order to try: its
//    file name beside the state (snapshots moved or restored together), then the path as
//    recorded (Caffe's relative to the current directory).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "train/caffe.pb.h"

namespace shoal::train {

// A parameter blob with its own storage in the flat buffers.
struct ParamBlob {
  std::string name;  // "<layer>/<index>", for messages
  std::vector<int64_t> shape;
  int64_t offset = 0, numel = 0;
};

std::string SnapshotBase(const std::string& model, const std::string& snapshot_prefix, int64_t iter);
struct SnapshotFiles {
  std::string model, state;
};
SnapshotFiles SnapshotFilesOf(const std::string& snapshot_base, bool hdf5);
std::string LearnedNetPath(const std::string& model_file);

// `histories`: the solver's flat history buffers (one or two), indexed by ParamBlob::offset.
caffe::SolverState MakeSolverStateProto(int64_t iter, const std::string& learned_net, int current_step,
                                        const std::vector<ParamBlob>& params, const std::vector<const float*>& histories);

Status ReadHistories(const caffe::SolverState& state, const std::vector<ParamBlob>& params, int64_t total,
                     const std::vector<float*>& histories, const std::string& what);

std::vector<std::string> LearnedNetCandidates(const std::string& state_uri, const std::string& learned_net);

}  // namespace shoal::train
