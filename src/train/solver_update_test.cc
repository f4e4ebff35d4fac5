#include "train/solver_update.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "train/prototxt.h"

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

// AdaGrad, RMSProp and AdaDelta over three steps, two elements: element 0 with lr_mult 1,
// decay_mult 1; element 1 with lr_mult 2, decay_mult 0; weight_decay 0.1, w = (1, -2),
// gradients (0.5, -1), (-0.25, 0.5), (1, 0). Worked by hand from solver_update.h, e.g. the
// first step, where d = (0.5 + 0.1 * 1, -1) = (0.6, -1):
//   AdaGrad  (rate 0.1):  h = (0.36, 1);    w = (1 - 0.1 * 0.6 / 0.6, -2 + 0.2 * 1 / 1) = (0.9, -1.8)
//   RMSProp  (rate 0.1, rms_decay 0.9): h = (0.036, 0.1);
//            w = (1 - 0.1 * 0.6 / sqrt(0.036), -2 + 0.2 / sqrt(0.1)) = (0.68377225, -1.36754447)
//   AdaDelta (rate 1, momentum 0.95, delta 1e-6): h = (0.018, 0.05);
//            u = (0.6 sqrt(1e-6 / 0.018001), -sqrt(1e-6 / 0.050001)) = (0.00447201, -0.00447209);
//            v = 0.05 u^2 = (9.99944e-7, 9.9998e-7); w = (0.99552799, -1.99105582) (lr_mult 2)
struct Step {
  double w[2], h[2], v[2];
};

void ExpectSteps(const UpdateArgs& base, const Step (&want)[3]) {
  const float lr[2] = {1, 2}, decay[2] = {1, 0};
  const float grads[3][2] = {{0.5f, -1}, {-0.25f, 0.5f}, {1, 0}};
  float w[2] = {1, -2}, h[2] = {0, 0}, v[2] = {0, 0};
  UpdateArgs a = base;
  for (int t = 0; t < 3; ++t) {
    a.iter = t;
    ApplySolverUpdate(a, 2, w, grads[t], h, UsesSecondHistory(a.type) ? v : nullptr, lr, decay);
    for (int i = 0; i < 2; ++i) {
      EXPECT_NEAR(w[i], want[t].w[i], 2e-6) << a.type << " step " << t + 1 << " w[" << i << "]";
      EXPECT_NEAR(h[i], want[t].h[i], 1e-6 * std::max(1.0, want[t].h[i])) << a.type << " step " << t + 1 << " h[" << i << "]";
      EXPECT_NEAR(v[i], want[t].v[i], 1e-6 * want[t].v[i] + 1e-12) << a.type << " step " << t + 1 << " v[" << i << "]";
    }
  }
}

TEST(SolverUpdate, AdaGrad) {
  UpdateArgs a;
  a.type = "AdaGrad";
  a.rate = 0.1f;
  a.weight_decay = 0.1f;
  ExpectSteps(a, {{{0.9, -1.8}, {0.36, 1}, {0, 0}},
                  {{0.925766266, -1.88944272}, {0.3856, 1.25}, {0, 0}},
                  {{0.838826929, -1.88944272}, {1.57932369, 1.25}, {0, 0}}});
}

TEST(SolverUpdate, RMSPropWithItsDecay) {
  UpdateArgs a;
  a.type = "RMSProp";
  a.rate = 0.1f;
  a.weight_decay = 0.1f;
  a.rms_decay = 0.9f;
  ExpectSteps(a, {{{0.683772251, -1.36754449}, {0.036, 0.1}, {0, 0}},
                  {{0.779898984, -1.66242839}, {0.0356986832, 0.115}, {0, 0}},
                  {{0.500005488, -1.66242839}, {0.148335037, 0.1035}, {0, 0}}});
}

TEST(SolverUpdate, AdaDeltaKeepsGradientAndUpdateHistories) {
  UpdateArgs a;
  a.type = "AdaDelta";
  a.rate = 1;
  a.weight_decay = 0.1f;
  a.momentum = 0.95f;
  a.delta = 1e-6f;
  ExpectSteps(a, {{{0.995527988, -1.99105582}, {0.018, 0.05}, {9.99944448e-07, 9.9998e-07}},
                  {{0.997103666, -1.99682924}, {0.018231718, 0.06}, {1.07408523e-06, 1.36663656e-06}},
                  {{0.99142519, -1.99682924}, {0.0777882766, 0.057}, {2.63263513e-06, 1.29830473e-06}}});
}

TEST(SolverUpdate, SecondHistoryForAdamAndAdaDeltaOnly) {
  for (const auto& type : SupportedSolverTypes()) EXPECT_EQ(UsesSecondHistory(type), type == "Adam" || type == "AdaDelta") << type;
}

}  // namespace
}  // namespace shoal::train
