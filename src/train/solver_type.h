// Caffe's solver types as a solver file gives them: the deprecated `solver_type` enum
// (SGD, NESTEROV, ADAGRAD, RMSPROP, ADADELTA, ADAM) becomes the `type` string, as Caffe's
// UpgradeSolverType does, and each type's own conditions are checked as Caffe's solver
// constructors check them (no momentum for AdaGrad and RMSProp, 0 <= rms_decay < 1), and
// average_loss >= 1 as Caffe's Solver::Step checks it.
//
// Contract: UpgradeSolverType rewrites `solver` in place and returns the field at fault
// with the reason (the caller adds the file and line), or nothing when the solver is
// fine. It does not judge whether `type` is supported (prototxt.cc does).
// Thread-safety: pure function.
#pragma once

#include <optional>
#include <string>

#include "train/caffe.pb.h"

namespace shoal::train {

struct SolverProblem {
  std::string field;
  std::string message;
};

std::optional<SolverProblem> UpgradeSolverType(caffe::SolverParameter& solver);

}  // namespace shoal::train
