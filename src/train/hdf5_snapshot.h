// Caffe's HDF5 snapshots (snapshot_format: HDF5), read and written with Debian's libhdf5,
// in memory (HDF5's core driver), so that they travel to any URI like the binary ones.
//
// Contract, in Caffe's layout (net.cpp ToHDF5, sgd_solver.cpp SnapshotSolverStateToHDF5):
//  - A .caffemodel.h5 has a group "data" with a group per layer and, in it, one float
//    dataset per blob named "0", "1", ... with the blob's shape. ModelToHdf5 writes the
//    blobs of `model` as given (Caffe leaves shared blobs out: pass the owners only);
//    ModelFromHdf5 returns every layer's blobs, in index order, as a NetParameter.
//  - A .solverstate.h5 has scalar int datasets "iter" and "current_step", a string
//    "learned_net" and a group "history" with datasets "0", "1", ... Shoal adds a string
//    dataset "shoal_position" (its TrainPosition, binary), which Caffe does not read.
//  - IsHdf5 tells HDF5 bytes by their signature.
//  - Malformed input is kInvalidArgument naming what is missing; never a crash (HDF5's
//    own error printing is silenced).
// Thread-safety: libhdf5 (serial build) is not thread-safe; call from one thread.
#pragma once

#include <string>

#include "common/status.h"
#include "train/caffe.pb.h"

namespace shoal::train {

bool IsHdf5(const std::string& bytes);

Result<std::string> ModelToHdf5(const caffe::NetParameter& model);
Result<caffe::NetParameter> ModelFromHdf5(const std::string& bytes);

Result<std::string> SolverStateToHdf5(const caffe::SolverState& state);
Result<caffe::SolverState> SolverStateFromHdf5(const std::string& bytes);

}  // namespace shoal::train
