// Caffe's parameter updates over flat float buffers (one pass, no allocation), for the
// trainer's replica 0: w -= update(g + weight_decay * decay_mult * w), per element
// lr_mult and decay_mult. Kept free of LibTorch so it compiles fast with -O3.
//
//   SGD:      h = m h + lr lr_mult d;                     w -= h
//   Nesterov: h' = m h + lr lr_mult d;                    w -= (1 + m) h' - m h
//   Adam:     h = b1 h + (1 - b1) d; v = b2 v + (1 - b2) d^2;
//             w -= lr sqrt(1 - b2^t) / (1 - b1^t) lr_mult h / (sqrt(v) + eps), t = iter + 1
// Thread-safety: pure function over the caller's buffers.
#pragma once

#include <cstdint>
#include <string>

namespace shoal::train {

struct UpdateArgs {
  std::string type = "SGD";  // SGD, Nesterov, Adam
  float rate = 0, momentum = 0, momentum2 = 0.999f, delta = 1e-8f, weight_decay = 0;
  int64_t iter = 0;
};

// w, g, h (and v for Adam), lr_mult, decay_mult: n elements each.
void ApplySolverUpdate(const UpdateArgs& a, int64_t n, float* w, const float* g, float* h, float* v,
                       const float* lr_mult, const float* decay_mult);

}  // namespace shoal::train
