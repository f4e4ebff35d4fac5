#include "train/solver_update.h"

#include <gtest/gtest.h>

#include <cmath>

namespace shoal::train {
namespace {

TEST(SolverUpdate, CaffeFormulasWithMultipliers) {
  float lr[2] = {1, 2}, decay[2] = {1, 0};
  UpdateArgs sgd;
  sgd.rate = 0.1f;
  sgd.momentum = 0.9f;
  sgd.weight_decay = 0.01f;
  float w[2] = {1, 1}, g[2] = {0.5f, 0.5f}, h[2] = {0.2f, 0};
  ApplySolverUpdate(sgd, 2, w, g, h, nullptr, lr, decay);
  EXPECT_FLOAT_EQ(h[0], 0.9f * 0.2f + 0.1f * (0.5f + 0.01f));  // decay_mult 1
  EXPECT_FLOAT_EQ(h[1], 0.1f * 2 * 0.5f);                       // lr_mult 2, no decay
  EXPECT_FLOAT_EQ(w[0], 1 - h[0]);

  UpdateArgs nesterov = sgd;
  nesterov.type = "Nesterov";
  float wn[1] = {1}, hn[1] = {0.2f};
  ApplySolverUpdate(nesterov, 1, wn, g, hn, nullptr, lr, decay);
  float next = 0.9f * 0.2f + 0.1f * 0.51f;
  EXPECT_FLOAT_EQ(hn[0], next);
  EXPECT_FLOAT_EQ(wn[0], 1 - (1.9f * next - 0.9f * 0.2f));

  // Adam over three steps with gradients 2, -1, 0.5 (lr 0.01, b1 0.9, b2 0.999), worked by
  // hand from the formulas in solver_update.h:
  //   t=1: h = 0.2,   v = 0.004,     step = 0.01 sqrt(0.001) / 0.1      = 0.00316228, w = 1 - 0.01
  //   t=2: h = 0.08,  v = 0.004996,  step = 0.01 sqrt(0.001999) / 0.19  = 0.00235317, w = 0.98733663
  //   t=3: h = 0.122, v = 0.00524100, step = 0.01 sqrt(0.002997) / 0.271 = 0.00202011, w = 0.98393234
  UpdateArgs adam;
  adam.type = "Adam";
  adam.rate = 0.01f;
  adam.momentum = 0.9f;
  adam.momentum2 = 0.999f;
  float wa[1] = {1}, ha[1] = {0}, va[1] = {0}, no_decay[1] = {0};
  const float grads[3] = {2, -1, 0.5f};
  const double want_h[3] = {0.2, 0.08, 0.122}, want_v[3] = {0.004, 0.004996, 0.005241004};
  const double want_w[3] = {0.99, 0.98733663, 0.98393234};
  for (int t = 0; t < 3; ++t) {
    adam.iter = t;
    ApplySolverUpdate(adam, 1, wa, &grads[t], ha, va, lr, no_decay);
    EXPECT_NEAR(ha[0], want_h[t], 1e-6) << "step " << t + 1;
    EXPECT_NEAR(va[0], want_v[t], 1e-7) << "step " << t + 1;
    EXPECT_NEAR(wa[0], want_w[t], 2e-6) << "step " << t + 1;
  }
}

}  // namespace
}  // namespace shoal::train
