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

  UpdateArgs adam;
  adam.type = "Adam";
  adam.rate = 0.01f;
  adam.momentum = 0.9f;
  adam.momentum2 = 0.999f;
  float wa[1] = {1}, ha[1] = {0}, va[1] = {0}, ga[1] = {2}, no_decay[1] = {0};
  ApplySolverUpdate(adam, 1, wa, ga, ha, va, lr, no_decay);
  // First step: the corrected update is lr * sign(g).
  EXPECT_NEAR(wa[0], 1 - 0.01f, 1e-6);
}

}  // namespace
}  // namespace shoal::train
