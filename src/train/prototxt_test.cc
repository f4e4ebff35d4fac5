#include "train/prototxt.h"

#include <gtest/gtest.h>

namespace shoal::train {
namespace {

const char* kNet = R"(name: "LeNet"
layer {
  name: "mnist"
  type: "Data"
  top: "data"
  top: "label"
  include { phase: TRAIN }
  transform_param { scale: 0.00390625 }
  data_param { source: "train-images-idx3-ubyte.gz" batch_size: 64 backend: IDX }
}
layer {
  name: "conv1"
  type: "Convolution"
  bottom: "data"
  top: "conv1"
  param { lr_mult: 1 }
  param { lr_mult: 2 decay_mult: 0 }
  convolution_param { num_output: 20 kernel_size: 5 stride: 1 weight_filler { type: "xavier" } bias_filler { type: "constant" } }
}
layer { name: "pool1" type: "Pooling" bottom: "conv1" top: "pool1" pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
layer { name: "ip" type: "InnerProduct" bottom: "pool1" top: "ip" inner_product_param { num_output: 10 weight_filler { type: "msra" } } }
layer { name: "acc" type: "Accuracy" bottom: "ip" bottom: "label" top: "accuracy" include { phase: TEST } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss" }
)";

TEST(Prototxt, ParsesACaffeNetWithItsFieldNames) {
  auto net = ParseNetText(kNet, "lenet.prototxt");
  ASSERT_TRUE(net.ok()) << net.status().message();
  EXPECT_EQ(net->name(), "LeNet");
  ASSERT_EQ(net->layer_size(), 6);
  EXPECT_EQ(net->layer(1).param(1).lr_mult(), 2);
  EXPECT_EQ(net->layer(1).param(1).decay_mult(), 0);
  EXPECT_EQ(net->layer(1).convolution_param().weight_filler().type(), "xavier");
  EXPECT_EQ(net->layer(0).data_param().backend(), caffe::DataParameter::IDX);
}

TEST(Prototxt, PhaseRulesSelectLayers) {
  auto net = ParseNetText(kNet, "lenet.prototxt");
  ASSERT_TRUE(net.ok());
  EXPECT_EQ(NetForPhase(*net, caffe::TRAIN).layer_size(), 5);  // no Accuracy
  EXPECT_EQ(NetForPhase(*net, caffe::TEST).layer_size(), 5);   // no TRAIN data
}

TEST(Prototxt, UnknownFieldIsRefusedWithNameAndLine) {
  std::string text = "name: \"x\"\nlayer {\n  name: \"a\"\n  type: \"ReLU\"\n  bottom: \"d\" top: \"d\"\n  frobnicate: 3\n}\n";
  auto net = ParseNetText(text, "net.prototxt");
  ASSERT_FALSE(net.ok());
  EXPECT_NE(net.status().message().find("net.prototxt:6:"), std::string::npos) << net.status().message();
  EXPECT_NE(net.status().message().find("frobnicate"), std::string::npos) << net.status().message();
}

TEST(Prototxt, UnsupportedLayerIsRefusedByTypeEvenWithItsOwnParamBlock) {
  std::string text = "layer {\n  name: \"relu\"\n  type: \"ReLU\"\n  bottom: \"d\" top: \"d\"\n}\n"
                     "layer {\n  name: \"py\"\n  type: \"Python\"\n  bottom: \"d\" top: \"n\"\n"
                     "  python_param { module: \"m\" layer: \"L\" }\n}\n";
  auto net = ParseNetText(text, "net.prototxt");
  ASSERT_FALSE(net.ok());
  const std::string& m = net.status().message();
  EXPECT_NE(m.find("net.prototxt:8: layer 'py' has type 'Python', which shoal train does not support"), std::string::npos) << m;
}

TEST(Prototxt, EveryProblemOfAFileIsReportedInOneRun) {
  std::string text = R"(layer { name: "a" type: "HingeLoss" bottom: "x" bottom: "y" top: "l" hinge_loss_param { norm: L2 } }
layer { name: "b" type: "Data" top: "x" data_param { source: "s" batch_size: 4 rand_skip: 3 } }
layer { name: "c" type: "Eltwise" bottom: "x" top: "e" }
layer { name: "d" type: "InnerProduct" bottom: "e" top: "f" inner_product_param { num_output: 2 weight_filler { type: "xavier" sparse: 3 } } }
layer { name: "e" type: "ReLU" bottom: "f" top: "f" propagate_down: true }
layer { name: "c" type: "Clip" bottom: "f" top: "f" clip_param { max: 1 } }
)";
  auto net = ParseNetText(text, "n.prototxt");
  ASSERT_FALSE(net.ok());
  const std::string& m = net.status().message();
  EXPECT_NE(m.find("n.prototxt: 6 problems:"), std::string::npos) << m;
  EXPECT_NE(m.find("n.prototxt:6: layer 'c': clip_param needs min and max"), std::string::npos) << m;
  EXPECT_NE(m.find("n.prototxt:1: layer 'a' has type 'HingeLoss'"), std::string::npos) << m;
  EXPECT_NE(m.find("n.prototxt:2: rand_skip is not supported"), std::string::npos) << m;
  EXPECT_NE(m.find("n.prototxt:3: layer 'c' (Eltwise) needs at least 2 bottoms; it has 1"), std::string::npos) << m;
  EXPECT_NE(m.find("n.prototxt:4: weight_filler sparse applies only to gaussian fillers"), std::string::npos) << m;
  EXPECT_NE(m.find("n.prototxt:5: propagate_down is not supported"), std::string::npos) << m;
}

TEST(Prototxt, CaffeOnSparkSourceClassAndShareInParallel) {
  std::string text = R"(layer { name: "data" type: "MemoryData" top: "data" top: "label"
  source_class: "com.yahoo.ml.caffe.LMDB"
  memory_data_param { source: "file:/data/mnist_train_lmdb" batch_size: 64 channels: 1 height: 28 width: 28 share_in_parallel: false }
}
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "data" bottom: "label" top: "loss" }
)";
  auto net = ParseNetText(text, "cos.prototxt");
  ASSERT_TRUE(net.ok()) << net.status().message();
  EXPECT_EQ(net->layer(0).memory_data_param().backend(), caffe::DataParameter::LMDB);
  std::string frame = text;
  frame.replace(frame.find("com.yahoo.ml.caffe.LMDB"), 23, "com.yahoo.ml.caffe.ImageDataFrame");
  auto refused = ParseNetText(frame, "cos.prototxt");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("cos.prototxt:2: layer 'data': source_class 'com.yahoo.ml.caffe.ImageDataFrame'"),
            std::string::npos) << refused.status().message();
}

TEST(Prototxt, SolverWithAnInlineNetOrMismatchedTestStatesIsRefused) {
  auto inline_net = ParseSolverText("net_param { name: \"n\" }\nbase_lr: 0.1\nmax_iter: 10\n", "s.prototxt");
  ASSERT_FALSE(inline_net.ok());
  EXPECT_NE(inline_net.status().message().find("s.prototxt:1: net_param (an inline net) is not supported"), std::string::npos)
      << inline_net.status().message();
  auto states = ParseSolverText("net: \"n\"\nbase_lr: 0.1\nmax_iter: 10\ntest_iter: 5\ntest_iter: 5\n"
                                "test_state { stage: \"a\" }\n", "s.prototxt");
  ASSERT_FALSE(states.ok());
  EXPECT_NE(states.status().message().find("s.prototxt:6: give one test_state per test net"), std::string::npos)
      << states.status().message();
  auto hdf5 = ParseSolverText("net: \"n\"\nbase_lr: 0.1\nmax_iter: 10\nsnapshot_format: HDF5\n", "s.prototxt");
  EXPECT_TRUE(hdf5.ok()) << hdf5.status().message();
}

TEST(Prototxt, OldV1LayersAreRefusedWithTheUpgradeTool) {
  auto net = ParseNetText("name: \"old\"\nlayers { name: \"conv1\" }\n", "v1.prototxt");
  ASSERT_FALSE(net.ok());
  EXPECT_NE(net.status().message().find("v1.prototxt:2:"), std::string::npos) << net.status().message();
  EXPECT_NE(net.status().message().find("upgrade_net_proto_text"), std::string::npos) << net.status().message();
}

TEST(Prototxt, StagesAndLevelsSelectLayersAsInCaffe) {
  auto net = ParseNetText(R"(layer { name: "a" type: "Input" top: "x" input_param { shape { dim: 1 } } }
layer { name: "on-train" type: "ReLU" bottom: "x" top: "y" include { phase: TEST stage: "test-on-train" } }
layer { name: "on-test" type: "ReLU" bottom: "x" top: "z" include { phase: TEST stage: "test-on-test" } }
layer { name: "deep" type: "ReLU" bottom: "x" top: "w" include { min_level: 2 } }
layer { name: "not-deploy" type: "ReLU" bottom: "x" top: "v" exclude { stage: "deploy" } }
)", "n");
  ASSERT_TRUE(net.ok()) << net.status().message();
  auto names = [](const caffe::NetParameter& n) {
    std::string out;
    for (const auto& l : n.layer()) out += l.name() + " ";
    return out;
  };
  caffe::NetState state;
  state.set_phase(caffe::TEST);
  state.add_stage("test-on-train");
  EXPECT_EQ(names(NetForState(*net, state)), "a on-train not-deploy ");
  state.clear_stage();
  state.add_stage("deploy");
  state.set_level(2);
  EXPECT_EQ(names(NetForState(*net, state)), "a deep ");
  EXPECT_EQ(names(NetForPhase(*net, caffe::TRAIN)), "a not-deploy ");
}

TEST(Prototxt, ParamBlockOfAnotherTypeIsRefused) {
  std::string text = "layer {\n  name: \"r\"\n  type: \"ReLU\"\n  bottom: \"d\" top: \"d\"\n  pooling_param { pool: MAX }\n}\n";
  auto net = ParseNetText(text, "n.prototxt");
  ASSERT_FALSE(net.ok());
  EXPECT_NE(net.status().message().find("n.prototxt:5: layer 'r' (ReLU) does not take pooling_param"), std::string::npos)
      << net.status().message();
}

TEST(Prototxt, UnsupportedValuesAreRefused) {
  auto stochastic = ParseNetText("layer {\n name: \"p\" type: \"Pooling\" bottom: \"a\" top: \"b\"\n pooling_param {\n  pool: STOCHASTIC kernel_size: 2 }\n}\n", "n");
  ASSERT_FALSE(stochastic.ok());
  EXPECT_NE(stochastic.status().message().find("n:4:"), std::string::npos) << stochastic.status().message();
  auto filler = ParseNetText("layer { name: \"c\" type: \"InnerProduct\" bottom: \"a\" top: \"b\"\n inner_product_param { num_output: 2\n weight_filler { type: \"bilinear\" } } }", "n");
  ASSERT_FALSE(filler.ok());
  EXPECT_NE(filler.status().message().find("'bilinear'"), std::string::npos) << filler.status().message();
  auto syntax = ParseNetText("layer {\n name: \"c\"\n", "n");
  ASSERT_FALSE(syntax.ok());
}

TEST(Prototxt, SolverFields) {
  auto solver = ParseSolverText(R"(net: "lenet.prototxt"
test_iter: 100
test_interval: 500
base_lr: 0.01
momentum: 0.9
weight_decay: 0.0005
lr_policy: "multistep"
gamma: 0.1
stepvalue: 100
stepvalue: 200
power: 0.75
display: 100
max_iter: 10000
snapshot: 5000
snapshot_prefix: "lenet"
solver_mode: CPU
type: "Nesterov"
random_seed: 7
)", "solver.prototxt");
  ASSERT_TRUE(solver.ok()) << solver.status().message();
  EXPECT_EQ(solver->stepvalue_size(), 2);
  EXPECT_EQ(solver->type(), "Nesterov");
  EXPECT_EQ(solver->random_seed(), 7);
}

TEST(Prototxt, SolverRefusesWhatItCannotDo) {
  auto type = ParseSolverText("net: \"n\"\nbase_lr: 0.1\nmax_iter: 10\ntype: \"AdaMax\"\n", "s.prototxt");
  ASSERT_FALSE(type.ok());
  EXPECT_NE(type.status().message().find("s.prototxt:4:"), std::string::npos) << type.status().message();
  auto policy = ParseSolverText("net: \"n\"\nbase_lr: 0.1\nmax_iter: 10\nlr_policy: \"sigmoid\"\n", "s");
  ASSERT_FALSE(policy.ok());
  EXPECT_NE(policy.status().message().find("sigmoid"), std::string::npos);
  auto field = ParseSolverText("net: \"n\"\nbase_lr: 0.1\nmax_iter: 10\niter_size: 2\n", "s");
  ASSERT_FALSE(field.ok());
  EXPECT_NE(field.status().message().find("iter_size"), std::string::npos);
  EXPECT_NE(field.status().message().find("s:4:"), std::string::npos);
}

}  // namespace
}  // namespace shoal::train
