#include "train/net.h"

#include <gtest/gtest.h>

#include "train/prototxt.h"

namespace shoal::train {
namespace {

std::unique_ptr<Net> Build(const std::string& text, caffe::Phase phase = caffe::TEST) {
  auto def = ParseNetText(text, "net.prototxt");
  EXPECT_TRUE(def.ok()) << def.status().message();
  if (!def.ok()) return nullptr;
  auto net = Net::Create(NetForPhase(*def, phase), phase, {});
  EXPECT_TRUE(net.ok()) << net.status().message();
  return net.ok() ? std::move(net).value() : nullptr;
}

std::vector<int64_t> ShapeOf(const Net& net, const std::string& blob) { return net.blob_shapes().at(blob); }

// CaffeNet (BVLC's bvlc_reference_caffenet deploy net), written out here: 60,965,224
// parameters, 6 x 6 after pool5 with Caffe's ceil-mode pooling.
const char* kCaffeNetDeploy = R"(name: "CaffeNet"
input: "data"
input_dim: 1 input_dim: 3 input_dim: 227 input_dim: 227
layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1" convolution_param { num_output: 96 kernel_size: 11 stride: 4 } }
layer { name: "relu1" type: "ReLU" bottom: "conv1" top: "conv1" }
layer { name: "pool1" type: "Pooling" bottom: "conv1" top: "pool1" pooling_param { pool: MAX kernel_size: 3 stride: 2 } }
layer { name: "norm1" type: "LRN" bottom: "pool1" top: "norm1" lrn_param { local_size: 5 alpha: 0.0001 beta: 0.75 } }
layer { name: "conv2" type: "Convolution" bottom: "norm1" top: "conv2" convolution_param { num_output: 256 pad: 2 kernel_size: 5 group: 2 } }
layer { name: "relu2" type: "ReLU" bottom: "conv2" top: "conv2" }
layer { name: "pool2" type: "Pooling" bottom: "conv2" top: "pool2" pooling_param { pool: MAX kernel_size: 3 stride: 2 } }
layer { name: "norm2" type: "LRN" bottom: "pool2" top: "norm2" lrn_param { local_size: 5 alpha: 0.0001 beta: 0.75 } }
layer { name: "conv3" type: "Convolution" bottom: "norm2" top: "conv3" convolution_param { num_output: 384 pad: 1 kernel_size: 3 } }
layer { name: "relu3" type: "ReLU" bottom: "conv3" top: "conv3" }
layer { name: "conv4" type: "Convolution" bottom: "conv3" top: "conv4" convolution_param { num_output: 384 pad: 1 kernel_size: 3 group: 2 } }
layer { name: "relu4" type: "ReLU" bottom: "conv4" top: "conv4" }
layer { name: "conv5" type: "Convolution" bottom: "conv4" top: "conv5" convolution_param { num_output: 256 pad: 1 kernel_size: 3 group: 2 } }
layer { name: "relu5" type: "ReLU" bottom: "conv5" top: "conv5" }
layer { name: "pool5" type: "Pooling" bottom: "conv5" top: "pool5" pooling_param { pool: MAX kernel_size: 3 stride: 2 } }
layer { name: "fc6" type: "InnerProduct" bottom: "pool5" top: "fc6" inner_product_param { num_output: 4096 } }
layer { name: "relu6" type: "ReLU" bottom: "fc6" top: "fc6" }
layer { name: "drop6" type: "Dropout" bottom: "fc6" top: "fc6" dropout_param { dropout_ratio: 0.5 } }
layer { name: "fc7" type: "InnerProduct" bottom: "fc6" top: "fc7" inner_product_param { num_output: 4096 } }
layer { name: "relu7" type: "ReLU" bottom: "fc7" top: "fc7" }
layer { name: "drop7" type: "Dropout" bottom: "fc7" top: "fc7" dropout_param { dropout_ratio: 0.5 } }
layer { name: "fc8" type: "InnerProduct" bottom: "fc7" top: "fc8" inner_product_param { num_output: 1000 } }
layer { name: "prob" type: "Softmax" bottom: "fc8" top: "prob" }
)";

TEST(Net, CaffeNetDeployHasCaffesShapesAndParameterCount) {
  auto net = Build(kCaffeNetDeploy);
  ASSERT_TRUE(net);
  EXPECT_EQ(ShapeOf(*net, "norm1"), (std::vector<int64_t>{1, 96, 27, 27}));
  EXPECT_EQ(ShapeOf(*net, "pool5"), (std::vector<int64_t>{1, 256, 6, 6}));
  EXPECT_EQ(ShapeOf(*net, "prob"), (std::vector<int64_t>{1, 1000}));
  EXPECT_EQ(net->layout().total, 60965224);
  EXPECT_EQ(net->outputs(), (std::vector<std::string>{"prob"}));
}

// A ResNet bottleneck in the form of He et al.'s ResNet-50 deploy file: convolutions
// without bias, BatchNorm with global statistics, Scale with bias, Eltwise SUM.
const char* kResidual = R"(name: "ResBlock"
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 2 dim: 8 dim: 7 dim: 7 } } }
layer { name: "res_a" type: "Convolution" bottom: "data" top: "res_a" convolution_param { num_output: 4 kernel_size: 1 bias_term: false } }
layer { name: "bn_a" type: "BatchNorm" bottom: "res_a" top: "res_a" batch_norm_param { use_global_stats: true } }
layer { name: "scale_a" type: "Scale" bottom: "res_a" top: "res_a" scale_param { bias_term: true } }
layer { name: "relu_a" type: "ReLU" bottom: "res_a" top: "res_a" }
layer { name: "res_b" type: "Convolution" bottom: "res_a" top: "res_b" convolution_param { num_output: 8 kernel_size: 3 pad: 1 bias_term: false } }
layer { name: "bn_b" type: "BatchNorm" bottom: "res_b" top: "res_b" batch_norm_param { use_global_stats: true } }
layer { name: "scale_b" type: "Scale" bottom: "res_b" top: "res_b" scale_param { bias_term: true } }
layer { name: "sum" type: "Eltwise" bottom: "data" bottom: "res_b" top: "sum" }
layer { name: "relu" type: "ReLU" bottom: "sum" top: "sum" }
layer { name: "pool" type: "Pooling" bottom: "sum" top: "pool" pooling_param { pool: AVE kernel_size: 7 stride: 1 } }
layer { name: "fc" type: "InnerProduct" bottom: "pool" top: "fc" inner_product_param { num_output: 10 } }
layer { name: "prob" type: "Softmax" bottom: "fc" top: "prob" }
)";

TEST(Net, ResidualBlockForwardsWithCaffesBlobs) {
  auto net = Build(kResidual);
  ASSERT_TRUE(net);
  EXPECT_EQ(ShapeOf(*net, "pool"), (std::vector<int64_t>{2, 8, 1, 1}));
  // conv a (32) + BN (4 + 4 + 1) + Scale (4 + 4) + conv b (288) + BN (8 + 8 + 1) + Scale (8 + 8) + fc (80 + 10)
  EXPECT_EQ(net->layout().total, 32 + 9 + 8 + 288 + 17 + 16 + 90);
  torch::Tensor values = torch::zeros({net->layout().total}), grads = torch::zeros({net->layout().total});
  net->Bind(values, grads);
  net->Fill(1);
  auto blobs = net->Forward({{"data", torch::randn({2, 8, 7, 7})}}, false, 0);
  ASSERT_TRUE(blobs.ok()) << blobs.status().message();
  EXPECT_NEAR(blobs->at("prob").sum().item<float>(), 2.0f, 1e-5);
  auto missing = net->Forward({}, false, 0);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("'data'"), std::string::npos) << missing.status().message();
}

// Two towers of a siamese net share their weights by name.
std::string Siamese(bool shared) {
  auto param = [&](const char* n) { return shared ? std::string("param { name: \"") + n + "\" }" : std::string(); };
  return std::string(R"(layer { name: "pair" type: "Input" top: "pair" top: "sim" input_param { shape { dim: 4 dim: 2 dim: 6 } shape { dim: 4 } } }
layer { name: "slice" type: "Slice" bottom: "pair" top: "a" top: "b" slice_param { slice_dim: 1 } }
layer { name: "ip" type: "InnerProduct" bottom: "a" top: "fa" )") + param("w") + param("bias") +
         R"( inner_product_param { num_output: 3 weight_filler { type: "xavier" } bias_filler { type: "gaussian" } } }
layer { name: "ip_p" type: "InnerProduct" bottom: "b" top: "fb" )" + param("w") + param("bias") +
         R"( inner_product_param { num_output: 3 weight_filler { type: "xavier" } bias_filler { type: "gaussian" } } }
layer { name: "loss" type: "ContrastiveLoss" bottom: "fa" bottom: "fb" bottom: "sim" top: "loss" }
)";
}

TEST(Net, SharedParametersAreOneBlobWhoseGradientSumsBothUses) {
  auto shared = Build(Siamese(true), caffe::TRAIN);
  auto separate = Build(Siamese(false), caffe::TRAIN);
  ASSERT_TRUE(shared && separate);
  EXPECT_EQ(separate->layout().total, 2 * (3 * 6 + 3));
  EXPECT_EQ(shared->layout().total, 3 * 6 + 3);
  EXPECT_EQ(shared->layout().blobs[2].owner, 0);
  EXPECT_EQ(shared->layout().blobs[3].owner, 1);

  torch::Tensor values = torch::zeros({shared->layout().total}), grads = torch::zeros({shared->layout().total});
  shared->Bind(values, grads);
  shared->Fill(5);
  torch::Tensor sep_values = torch::cat({values, values}), sep_grads = torch::zeros({separate->layout().total});
  separate->Bind(sep_values, sep_grads);  // the same weights in both towers
  std::map<std::string, torch::Tensor> in = {{"pair", torch::randn({4, 2, 6})}, {"sim", torch::tensor({1.0f, 0.0f, 1.0f, 0.0f})}};
  auto a = shared->Forward(in, true, 0);
  auto b = separate->Forward(in, true, 0);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NEAR(shared->Loss(*a).item<float>(), separate->Loss(*b).item<float>(), 1e-6);
  shared->Loss(*a).backward();
  separate->Loss(*b).backward();
  torch::Tensor summed = sep_grads.narrow(0, 0, 21) + sep_grads.narrow(0, 21, 21);
  EXPECT_TRUE(torch::allclose(grads, summed, 1e-5, 1e-6)) << grads << summed;
  // The weights the model file holds are the owner's, for both layers (Caffe writes both);
  // the HDF5 form leaves the second tower's out, and either form loads back.
  caffe::NetParameter full = shared->ToProto(), owners = shared->ToProto(/*owners_only=*/true);
  ASSERT_EQ(full.layer_size(), 2);
  EXPECT_EQ(full.layer(1).blobs(0).data_size(), 18);
  EXPECT_EQ(owners.layer(1).blobs(0).data_size(), 0);
  auto copy = Build(Siamese(true), caffe::TRAIN);
  torch::Tensor copy_values = torch::zeros({copy->layout().total});
  copy->Bind(copy_values, torch::zeros({copy->layout().total}));
  auto loaded = copy->LoadProto(owners);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(*loaded, 2);
  EXPECT_TRUE(torch::equal(copy_values, values));
}

TEST(Net, EachOwnedGradientIsReportedOnceABackwardWhenItIsFinalInTheBuffer) {
  auto net = Build(Siamese(true), caffe::TRAIN);
  ASSERT_TRUE(net);
  torch::Tensor values = torch::zeros({net->layout().total}), grads = torch::zeros({net->layout().total});
  net->Bind(values, grads);
  net->Fill(5);
  std::map<int, torch::Tensor> reported;  // blob -> its gradient in the buffer when reported
  net->OnGradientReady([&](int blob) {
    EXPECT_FALSE(reported.count(blob)) << "blob " << blob << " reported twice";
    const BlobInfo& b = net->layout().blobs[blob];
    reported[blob] = grads.narrow(0, b.offset, b.numel).clone();
  });
  std::map<std::string, torch::Tensor> in = {{"pair", torch::randn({4, 2, 6})}, {"sim", torch::tensor({1.0f, 0.0f, 1.0f, 0.0f})}};
  for (int pass = 0; pass < 2; ++pass) {  // the hooks outlive one backward's graph
    reported.clear();
    grads.zero_();
    auto blobs = net->Forward(in, true, 0);
    ASSERT_TRUE(blobs.ok());
    net->Loss(*blobs).backward();
    ASSERT_EQ(reported.size(), 2u) << "the two owners once each; blobs 2 and 3 share their storage";
    for (const auto& [blob, seen] : reported) {
      const BlobInfo& b = net->layout().blobs[blob];
      EXPECT_TRUE(torch::equal(seen, grads.narrow(0, b.offset, b.numel)))
          << "blob " << blob << ": reported before both towers' uses were summed into the buffer";
    }
    // The weights' gradient is not zero (the shared bias's is: it cancels in fa - fb).
    EXPECT_GT(reported[0].abs().sum().item<float>(), 0);
  }
}

TEST(Net, SharedParametersMustAgreeInShapeAndRate) {
  std::string text = Siamese(true);
  text.replace(text.rfind("num_output: 3"), 13, "num_output: 4");
  auto def = ParseNetText(text, "n");
  ASSERT_TRUE(def.ok());
  auto net = Net::Create(NetForPhase(*def, caffe::TRAIN), caffe::TRAIN, {});
  ASSERT_FALSE(net.ok());
  EXPECT_NE(net.status().message().find("shared parameter 'w' has shape 4 x 6 here and 3 x 6 in layer 'ip'"), std::string::npos)
      << net.status().message();
}

TEST(Net, EveryLossTopCountsWithItsWeight) {
  auto net = Build(R"(layer { name: "in" type: "Input" top: "x" top: "y" input_param { shape { dim: 2 dim: 3 } } }
layer { name: "l2" type: "EuclideanLoss" bottom: "x" bottom: "y" top: "l2" loss_weight: 0.5 }
layer { name: "xent" type: "SigmoidCrossEntropyLoss" bottom: "x" bottom: "y" top: "xent" }
layer { name: "monitor" type: "EuclideanLoss" bottom: "x" bottom: "y" top: "monitor" loss_weight: 0 }
)");
  ASSERT_TRUE(net);
  torch::Tensor x = torch::randn({2, 3}), y = torch::rand({2, 3});
  auto blobs = net->Forward({{"x", x}, {"y", y}}, false, 0);
  ASSERT_TRUE(blobs.ok());
  float want = 0.5f * blobs->at("l2").item<float>() + blobs->at("xent").item<float>();
  EXPECT_NEAR(net->Loss(*blobs).item<float>(), want, 1e-6);
}

TEST(Net, ALayerThatCannotTakeItsBottomsIsNamed) {
  auto def = ParseNetText(R"(layer { name: "in" type: "Input" top: "x" top: "y" input_param { shape { dim: 2 dim: 3 } shape { dim: 2 dim: 4 } } }
layer { name: "add" type: "Eltwise" bottom: "x" bottom: "y" top: "z" }
)", "n");
  ASSERT_TRUE(def.ok());
  auto net = Net::Create(*def, caffe::TEST, {});
  ASSERT_FALSE(net.ok());
  EXPECT_NE(net.status().message().find("layer 'add' (Eltwise): bottoms differ in shape (2 x 3 and 2 x 4)"), std::string::npos)
      << net.status().message();
}

}  // namespace
}  // namespace shoal::train
