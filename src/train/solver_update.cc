#include "train/solver_update.h"

#include <cmath>

namespace shoal::train {

bool UsesSecondHistory(const std::string& type) { return type == "Adam" || type == "AdaDelta"; }

void ApplySolverUpdate(const UpdateArgs& a, int64_t n, float* __restrict w, const float* __restrict g,
                       float* __restrict h, float* __restrict v, const float* __restrict lr,
                       const float* __restrict decay) {
  const float wd = a.weight_decay, m = a.momentum, r = a.rate, eps = a.delta;
  if (a.type == "Adam") {
    const float b1 = a.momentum, b2 = a.momentum2;
    const double t = static_cast<double>(a.iter + 1);
    const float step = static_cast<float>(a.rate * std::sqrt(1 - std::pow(b2, t)) / (1 - std::pow(b1, t)));
    for (int64_t i = 0; i < n; ++i) {
      float d = g[i] + wd * decay[i] * w[i];
      h[i] = b1 * h[i] + (1 - b1) * d;
      v[i] = b2 * v[i] + (1 - b2) * d * d;
      w[i] -= step * lr[i] * h[i] / (std::sqrt(v[i]) + eps);
    }
  } else if (a.type == "Nesterov") {
    for (int64_t i = 0; i < n; ++i) {
      float prev = h[i];
      h[i] = m * h[i] + r * lr[i] * (g[i] + wd * decay[i] * w[i]);
      w[i] -= (1 + m) * h[i] - m * prev;
    }
  } else if (a.type == "AdaGrad") {
    for (int64_t i = 0; i < n; ++i) {
      float d = g[i] + wd * decay[i] * w[i];
      h[i] += d * d;
      w[i] -= r * lr[i] * (d / (std::sqrt(h[i]) + eps));
    }
  } else if (a.type == "RMSProp") {
    const float keep = a.rms_decay;
    for (int64_t i = 0; i < n; ++i) {
      float d = g[i] + wd * decay[i] * w[i];
      h[i] = (1 - keep) * (d * d) + keep * h[i];
      w[i] -= r * lr[i] * (d / (std::sqrt(h[i]) + eps));
    }
  } else if (a.type == "AdaDelta") {
    for (int64_t i = 0; i < n; ++i) {
      float d = g[i] + wd * decay[i] * w[i];
      h[i] = (1 - m) * (d * d) + m * h[i];
      float u = d * std::sqrt((eps + v[i]) / (eps + h[i]));
      v[i] = (1 - m) * (u * u) + m * v[i];
      w[i] -= r * lr[i] * u;
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      h[i] = m * h[i] + r * lr[i] * (g[i] + wd * decay[i] * w[i]);
      w[i] -= h[i];
    }
  }
}

}  // namespace shoal::train
