#include "train/layers.h"

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

namespace shoal::train {
namespace {

caffe::LayerParameter Layer(const std::string& text) {
  caffe::LayerParameter layer;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &layer)) << text;
  return layer;
}

torch::Tensor T(std::vector<float> values, std::vector<int64_t> shape) {
  return torch::tensor(values).reshape(shape).clone();
}

// Runs one layer; its parameter blobs are `params` in order (learnable ones get gradients).
struct LayerRun {
  std::vector<torch::Tensor> params;
  std::vector<std::pair<torch::Tensor, torch::Tensor>> pending;

  std::vector<torch::Tensor> operator()(const caffe::LayerParameter& layer, std::vector<torch::Tensor> bottoms,
                                        bool train = false) {
    LayerContext ctx{layer};
    ctx.train = train;
    ctx.phase = train ? caffe::TRAIN : caffe::TEST;
    ctx.bottoms = std::move(bottoms);
    ctx.pending = &pending;
    size_t next = 0;
    ctx.param = [&](std::vector<int64_t> shape, const caffe::FillerParameter& filler, bool learnable) {
      if (next < params.size()) return params[next++];
      torch::Tensor t = torch::zeros(shape);
      at::Generator gen = at::detail::createCPUGenerator(7);
      FillBlob(t, filler, gen);
      if (learnable) t.requires_grad_(true);
      params.push_back(t);
      ++next;
      return t;
    };
    auto tops = RunLayer(ctx);
    EXPECT_TRUE(tops.ok()) << tops.status().message();
    return tops.ok() ? *tops : std::vector<torch::Tensor>{};
  }
};

void ExpectNear(const torch::Tensor& got, std::vector<float> want, double tol = 1e-5) {
  torch::Tensor g = got.detach().reshape({-1});
  ASSERT_EQ(g.numel(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(g[static_cast<int64_t>(i)].item<float>(), want[i], tol) << "at " << i;
}

TEST(Layers, LrnAcrossChannelsIsCaffesWindowOfSquares) {
  // alpha / n = 1, beta = 1, k = 1: y_c = x_c / (1 + sum of x^2 over channels c-1..c+1).
  auto y = LayerRun()(Layer("name: 'n' type: 'LRN' lrn_param { local_size: 3 alpha: 3 beta: 1 }"), {T({1, 2, 3}, {1, 3, 1, 1})});
  ExpectNear(y[0], {1.0f / 6, 2.0f / 15, 3.0f / 14});
}

TEST(Layers, LrnWithinChannelUsesOneNotK) {
  // alpha / n^2 = 1: y = x / (1 + sum of x^2 over the 3 x 3 window), k ignored as in Caffe.
  auto y = LayerRun()(Layer("name: 'n' type: 'LRN' lrn_param { local_size: 3 alpha: 9 beta: 1 k: 5 norm_region: WITHIN_CHANNEL }"),
                      {T({1, 2, 3}, {1, 1, 1, 3})});
  ExpectNear(y[0], {1.0f / 6, 2.0f / 15, 3.0f / 14});
}

TEST(Layers, LrnGradientMatchesFiniteDifferences) {
  torch::Tensor x = torch::randn({2, 5, 3, 3}, torch::kDouble).to(torch::kFloat).requires_grad_(true);
  auto layer = Layer("name: 'n' type: 'LRN' lrn_param { local_size: 5 alpha: 0.0001 beta: 0.75 }");
  auto f = [&](const torch::Tensor& in) { return LayerRun()(layer, {in})[0].sum(); };
  f(x).backward();
  torch::NoGradGuard no_grad;
  torch::Tensor flat = x.detach().clone().reshape({-1});
  for (int64_t i : {0, 7, 44, 89}) {
    torch::Tensor up = flat.clone(), down = flat.clone();
    up[i] += 1e-2;
    down[i] -= 1e-2;
    double numeric = (f(up.reshape(x.sizes())) - f(down.reshape(x.sizes()))).item<double>() / 2e-2;
    EXPECT_NEAR(x.grad().reshape({-1})[i].item<double>(), numeric, 1e-3);
  }
}

TEST(Layers, EltwiseSumWithCoefficientsProductAndMax) {
  torch::Tensor a = T({1, 5}, {1, 2}), b = T({3, 2}, {1, 2});
  ExpectNear(LayerRun()(Layer("name: 'e' type: 'Eltwise' eltwise_param { coeff: 1 coeff: -1 }"), {a, b})[0], {-2, 3});
  ExpectNear(LayerRun()(Layer("name: 'e' type: 'Eltwise' eltwise_param { operation: PROD }"), {a, b})[0], {3, 10});
  ExpectNear(LayerRun()(Layer("name: 'e' type: 'Eltwise' eltwise_param { operation: MAX }"), {a, b})[0], {3, 5});
}

TEST(Layers, SliceAtPointsOrEvenly) {
  torch::Tensor x = torch::arange(12, torch::kFloat).reshape({2, 6});
  auto parts = LayerRun()(Layer("name: 's' type: 'Slice' top: 'a' top: 'b' slice_param { slice_dim: 1 slice_point: 1 }"), {x});
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].sizes(), (std::vector<int64_t>{2, 1}));
  ExpectNear(parts[1], {1, 2, 3, 4, 5, 7, 8, 9, 10, 11});
  auto even = LayerRun()(Layer("name: 's' type: 'Slice' top: 'a' top: 'b' top: 'c' slice_param { axis: -1 }"), {x});
  ASSERT_EQ(even.size(), 3u);
  ExpectNear(even[2], {4, 5, 10, 11});
}

TEST(Layers, EuclideanLossAndItsGradient) {
  torch::Tensor a = T({1, 2, 3, 4}, {2, 2}).requires_grad_(true);
  auto loss = LayerRun()(Layer("name: 'l' type: 'EuclideanLoss'"), {a, torch::zeros({2, 2})})[0];
  EXPECT_NEAR(loss.item<float>(), 30.0f / 4, 1e-6);  // sum of squares / 2N
  loss.backward();
  ExpectNear(a.grad(), {0.5, 1, 1.5, 2});  // (a - b) / N
}

TEST(Layers, SigmoidCrossEntropyLossNormalisesByTheBatch) {
  torch::Tensor x = T({0, 2}, {2, 1}).requires_grad_(true);
  auto loss = LayerRun()(Layer("name: 'l' type: 'SigmoidCrossEntropyLoss'"), {x, T({1, 0}, {2, 1})})[0];
  double want = (std::log(2.0) + 2.0 + std::log1p(std::exp(-2.0))) / 2;
  EXPECT_NEAR(loss.item<float>(), want, 1e-5);
  loss.backward();
  ExpectNear(x.grad(), {(0.5f - 1) / 2, static_cast<float>(1 / (1 + std::exp(-2.0))) / 2});
}

TEST(Layers, ContrastiveLossIsCaffesIncludingItsGradient) {
  torch::Tensor a = torch::zeros({2, 2}).requires_grad_(true);
  torch::Tensor b = T({3, 4, 0.3f, 0.4f}, {2, 2});
  torch::Tensor sim = T({1, 0}, {2});
  auto loss = LayerRun()(Layer("name: 'l' type: 'ContrastiveLoss' contrastive_loss_param { margin: 1 }"), {a, b, sim})[0];
  EXPECT_NEAR(loss.item<float>(), (25 + 0.25) / 4, 1e-5);  // similar d^2, dissimilar (margin - d)^2, over 2N
  loss.backward();
  float k = -0.5f / (0.5f + 1e-4f) / 2;  // -mdist / (d + 1e-4) / N
  ExpectNear(a.grad(), {-1.5f, -2.0f, k * -0.3f, k * -0.4f}, 1e-5);
  auto legacy = LayerRun()(Layer("name: 'l' type: 'ContrastiveLoss' contrastive_loss_param { legacy_version: true }"),
                           {torch::zeros({2, 2}), b, sim})[0];
  EXPECT_NEAR(legacy.item<float>(), (25 + 0.75) / 4, 1e-5);  // margin - d^2
}

TEST(Layers, NeuronsComputeCaffesFormulas) {
  torch::Tensor x = T({-4, 2}, {1, 2});
  ExpectNear(LayerRun()(Layer("name: 'p' type: 'PReLU'"), {x})[0], {-1, 2});  // default slope 0.25
  ExpectNear(LayerRun()(Layer("name: 'p' type: 'Power' power_param { power: 2 scale: 2 shift: 1 }"), {x})[0], {49, 25});
  ExpectNear(LayerRun()(Layer("name: 'e' type: 'Exp' exp_param { base: 2 scale: 1 shift: 1 }"), {x})[0], {0.125f, 8});
  ExpectNear(LayerRun()(Layer("name: 'l' type: 'Log' log_param { base: 2 shift: 6 }"), {x})[0], {1, 3});
  ExpectNear(LayerRun()(Layer("name: 'a' type: 'AbsVal'"), {x})[0], {4, 2});
  ExpectNear(LayerRun()(Layer("name: 't' type: 'Threshold' threshold_param { threshold: 1 }"), {x})[0], {0, 1});
  ExpectNear(LayerRun()(Layer("name: 'b' type: 'BNLL'"), {x})[0], {static_cast<float>(std::log1p(std::exp(-4.0))), static_cast<float>(std::log1p(std::exp(2.0)))});
}

TEST(Layers, ReshapeCopiesZerosAndInfersMinusOne) {
  auto y = LayerRun()(Layer("name: 'r' type: 'Reshape' reshape_param { shape { dim: 0 dim: -1 } }"), {torch::zeros({2, 3, 4})});
  EXPECT_EQ(y[0].sizes(), (std::vector<int64_t>{2, 12}));
  auto tail = LayerRun()(Layer("name: 'r' type: 'Reshape' reshape_param { shape { dim: 2 dim: 2 } axis: 1 num_axes: 1 }"), {torch::zeros({3, 4, 5})});
  EXPECT_EQ(tail[0].sizes(), (std::vector<int64_t>{3, 2, 2, 5}));
}

TEST(Layers, InnerProductTransposeKeepsTheWeightAsKByN) {
  LayerRun run;
  run.params = {T({1, 2, 3, 4, 5, 6}, {3, 2})};  // K = 3 inputs, N = 2 outputs
  auto y = run(Layer("name: 'ip' type: 'InnerProduct' inner_product_param { num_output: 2 transpose: true bias_term: false }"),
               {T({1, 1, 1}, {1, 3})});
  ExpectNear(y[0], {9, 12});
}

// InnerProduct runs as a 1 x 1 convolution where oneDNN is there: its output and every
// gradient are torch::linear's, for the usual axis, a later axis and a transposed weight.
TEST(Layers, InnerProductGivesLinearsOutputAndGradients) {
  struct Case {
    std::string param;
    std::vector<int64_t> input;
    bool transpose;
  };
  for (const Case& c : {Case{"num_output: 5", {4, 3, 2, 2}, false}, Case{"num_output: 5 axis: 2", {2, 3, 4, 2}, false},
                        Case{"num_output: 5 transpose: true", {4, 6}, true}}) {
    torch::manual_seed(3);
    torch::Tensor x = torch::randn(c.input).requires_grad_(true);
    LayerRun run;
    auto y = run(Layer("name: 'ip' type: 'InnerProduct' inner_product_param { " + c.param +
                       " weight_filler { type: 'gaussian' } bias_filler { type: 'gaussian' } }"),
                 {x});
    ASSERT_EQ(run.params.size(), 2u) << c.param;
    torch::Tensor w = run.params[0], b = run.params[1];
    torch::Tensor g = torch::randn(y[0].sizes());
    auto grads = torch::autograd::grad({y[0]}, {x, w, b}, {g});
    torch::Tensor x2 = x.detach().clone().requires_grad_(true), w2 = w.detach().clone().requires_grad_(true),
                  b2 = b.detach().clone().requires_grad_(true);
    int axis = c.param.find("axis: 2") != std::string::npos ? 2 : 1;
    torch::Tensor want = torch::linear(x2.flatten(axis), c.transpose ? w2.t() : w2, b2);
    auto want_grads = torch::autograd::grad({want}, {x2, w2, b2}, {g});
    EXPECT_TRUE(torch::allclose(y[0], want, 1e-5, 1e-5)) << c.param;
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(torch::allclose(grads[i], want_grads[i], 1e-5, 1e-5)) << c.param << " gradient " << i;
  }
}

TEST(Layers, DeconvolutionHasCaffesBlobShapeAndOutputSize) {
  LayerRun run;
  auto y = run(Layer("name: 'd' type: 'Deconvolution' convolution_param { num_output: 4 kernel_size: 2 stride: 2 }"), {torch::zeros({1, 2, 3, 3})});
  EXPECT_EQ(y[0].sizes(), (std::vector<int64_t>{1, 4, 6, 6}));
  EXPECT_EQ(run.params[0].sizes(), (std::vector<int64_t>{2, 4, 2, 2}));
}

TEST(Layers, AccuracyTopKAndArgMax) {
  torch::Tensor scores = T({0.1f, 0.5f, 0.4f, 0.7f, 0.2f, 0.1f}, {2, 3});
  ExpectNear(LayerRun()(Layer("name: 'a' type: 'Accuracy'"), {scores, T({2, 0}, {2})})[0], {0.5});
  ExpectNear(LayerRun()(Layer("name: 'a' type: 'Accuracy' accuracy_param { top_k: 2 }"), {scores, T({2, 0}, {2})})[0], {1});
  ExpectNear(LayerRun()(Layer("name: 'm' type: 'ArgMax'"), {scores})[0], {1, 0});
}

TEST(Layers, LossWeightsFollowCaffesDefaults) {
  EXPECT_EQ(LossWeight(Layer("name: 'l' type: 'EuclideanLoss' top: 'a'"), 0), 1.0f);
  EXPECT_EQ(LossWeight(Layer("name: 'l' type: 'SoftmaxWithLoss' top: 'a' top: 'b'"), 1), 0.0f);
  EXPECT_EQ(LossWeight(Layer("name: 'l' type: 'EuclideanLoss' top: 'a' loss_weight: 0"), 0), 0.0f);
  EXPECT_EQ(LossWeight(Layer("name: 'i' type: 'InnerProduct' top: 'a' loss_weight: 0.5"), 0), 0.5f);
  EXPECT_EQ(LossWeight(Layer("name: 'i' type: 'InnerProduct' top: 'a'"), 0), 0.0f);
}

TEST(Layers, SparseGaussianKeepsSparseOverOutputsOfTheWeights) {
  caffe::FillerParameter f;
  f.set_type("gaussian");
  f.set_std(1);
  f.set_sparse(10);
  torch::Tensor w = torch::zeros({100, 200});
  at::Generator gen = at::detail::createCPUGenerator(3);
  FillBlob(w, f, gen);
  double kept = (w != 0).sum().item<double>() / w.numel();
  EXPECT_NEAR(kept, 0.1, 0.01);  // sparse / num_outputs
}

}  // namespace
}  // namespace shoal::train
