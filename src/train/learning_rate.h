// The learning rate of a Caffe solver at an iteration, by Caffe's formulas
// (SGDSolver::GetLearningRate):
//
//   fixed      base_lr
//   step       base_lr * gamma ^ floor(iter / stepsize)
//   exp        base_lr * gamma ^ iter
//   inv        base_lr * (1 + gamma * iter) ^ (-power)
//   multistep  base_lr * gamma ^ (how many stepvalues iter has reached)
//   poly       base_lr * (1 - iter / max_iter) ^ power
//
// Contract: the solver has passed prototxt.h's checks (a known policy, stepsize > 0 for
// step, stepvalues for multistep). Thread-safety: a pure function.
#pragma once

#include <cstdint>

#include "train/caffe.pb.h"

namespace shoal::train {

double LearningRate(const caffe::SolverParameter& solver, int64_t iter);
// Caffe's current_step_ at an iteration (a .solverstate records it): the steps the step
// and multistep policies have taken; 0 for the other policies.
int CurrentStep(const caffe::SolverParameter& solver, int64_t iter);

}  // namespace shoal::train
