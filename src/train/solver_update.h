// Caffe's parameter updates over flat float buffers (one pass, no allocation), for the
// trainer's replica 0. Every solver first regularises, d = g + weight_decay decay_mult w
// (Caffe's L2 Regularize), then with r = rate lr_mult (Caffe's local_rate):
//
//   SGD:      h = m h + r d;                                w -= h
//   Nesterov: h' = m h + r d;                               w -= (1 + m) h' - m h
//   AdaGrad:  h = h + d^2;                                  w -= r d / (sqrt(h) + delta)
//   RMSProp:  h = rms_decay h + (1 - rms_decay) d^2;        w -= r d / (sqrt(h) + delta)
//   AdaDelta: h = m h + (1 - m) d^2;  u = d sqrt((v + delta) / (h + delta));
//             v = m v + (1 - m) u^2;                        w -= r u
//   Adam:     h = b1 h + (1 - b1) d;  v = b2 v + (1 - b2) d^2;
//             w -= rate sqrt(1 - b2^t) / (1 - b1^t) lr_mult h / (sqrt(v) + delta), t = iter + 1
//
// h is the solver's history (Caffe's history_), v the second history of AdaDelta and Adam
// (Caffe appends it to history_). Each line is computed in Caffe's order of float
// operations (sgd_solvers: sgd, nesterov, adagrad, rmsprop, adadelta, adam_solver.cpp).
// Contract: `type` is one of prototxt.h's SupportedSolverTypes(); v is non-null iff
// UsesSecondHistory(type).
// Thread-safety: pure functions over the caller's buffers.
#pragma once

#include <cstdint>
#include <string>

namespace shoal::train {

struct UpdateArgs {
  std::string type = "SGD";
  float rate = 0, momentum = 0, momentum2 = 0.999f, delta = 1e-8f, weight_decay = 0, rms_decay = 0.99f;
  int64_t iter = 0;
};

// AdaDelta and Adam keep a second history (Caffe: a second set of history blobs).
bool UsesSecondHistory(const std::string& type);

// w, g, h (and v), lr_mult, decay_mult: n elements each.
void ApplySolverUpdate(const UpdateArgs& a, int64_t n, float* w, const float* g, float* h, float* v,
                       const float* lr_mult, const float* decay_mult);

}  // namespace shoal::train
