#include "train/solver_state.h"

#include <gtest/gtest.h>

namespace shoal::train {
namespace {

// A net of three parameter blobs where the third shares the first's storage: the flat
// buffer holds 6 + 2 values and Caffe's learnable blobs are the first two.
const std::vector<ParamBlob> kParams = {{"ip1/0", {2, 3}, 0, 6}, {"ip1/1", {2}, 6, 2}};
constexpr int64_t kTotal = 8;

TEST(SolverState, OneHistoryBlobPerLearnableBlobWithItsShapeSetAfterSet) {
  std::vector<float> h(kTotal), v(kTotal);
  for (int i = 0; i < kTotal; ++i) h[i] = static_cast<float>(i), v[i] = static_cast<float>(100 + i);
  caffe::SolverState state = MakeSolverStateProto(500, "out/m_iter_500.caffemodel", 2, kParams, {h.data(), v.data()});
  EXPECT_EQ(state.iter(), 500);
  EXPECT_EQ(state.learned_net(), "out/m_iter_500.caffemodel");
  EXPECT_EQ(state.current_step(), 2);
  ASSERT_EQ(state.history_size(), 4);  // first moments of both blobs, then second moments
  EXPECT_EQ(state.history(0).shape().dim_size(), 2);
  EXPECT_EQ(state.history(0).shape().dim(1), 3);
  EXPECT_EQ(state.history(0).data_size(), 6);
  EXPECT_EQ(state.history(1).shape().dim(0), 2);
  EXPECT_EQ(state.history(1).data(1), 7);
  EXPECT_EQ(state.history(2).data(0), 100);
  EXPECT_EQ(state.history(3).data(1), 107);
  EXPECT_FALSE(state.has_shoal_position());

  std::vector<float> h2(kTotal), v2(kTotal);
  ASSERT_TRUE(ReadHistories(state, kParams, kTotal, {h2.data(), v2.data()}, "s").ok());
  EXPECT_EQ(h2, h);
  EXPECT_EQ(v2, v);
}

TEST(SolverState, ReadsCaffesSgdStateAndOlderShoalFlatStates) {
  caffe::SolverState caffe_sgd;  // as Caffe's SGDSolver writes it: no shoal_position
  caffe_sgd.set_iter(100);
  for (const auto& p : kParams) {
    auto* blob = caffe_sgd.add_history();
    for (int64_t i = 0; i < p.numel; ++i) blob->add_data(static_cast<float>(p.offset + i) / 2);
  }
  std::vector<float> h(kTotal);
  ASSERT_TRUE(ReadHistories(caffe_sgd, kParams, kTotal, {h.data()}, "s").ok());
  EXPECT_EQ(h[7], 3.5f);

  caffe::SolverState flat;  // an older Shoal's: one blob over the whole buffer
  flat.mutable_shoal_position()->set_workers(1);
  for (int s = 0; s < 2; ++s) {
    auto* blob = flat.add_history();
    for (int i = 0; i < kTotal; ++i) blob->add_data(static_cast<float>(s * 10 + i));
  }
  std::vector<float> a(kTotal), b(kTotal);
  ASSERT_TRUE(ReadHistories(flat, kParams, kTotal, {a.data(), b.data()}, "s").ok());
  EXPECT_EQ(a[7], 7);
  EXPECT_EQ(b[0], 10);
}

TEST(SolverState, AnotherNetOrSolverIsRefusedByName) {
  std::vector<float> h(kTotal), v(kTotal);
  caffe::SolverState sgd = MakeSolverStateProto(1, "m", 0, kParams, {h.data()});
  auto two = ReadHistories(sgd, kParams, kTotal, {h.data(), v.data()}, "m_iter_1.solverstate");
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.message().find("m_iter_1.solverstate holds 2 history blobs; this net's solver keeps 4"), std::string::npos)
      << two.message();
  sgd.mutable_history(1)->add_data(1);
  auto shape = ReadHistories(sgd, kParams, kTotal, {h.data()}, "m_iter_1.solverstate");
  ASSERT_FALSE(shape.ok());
  EXPECT_NE(shape.message().find("history blob 1 has 3 values; this net's parameter blob ip1/1 has 2"), std::string::npos)
      << shape.message();
}

TEST(SolverState, FileNames) {
  EXPECT_EQ(SnapshotBase("out/lenet.caffemodel", "", 500), "out/lenet_iter_500");
  EXPECT_EQ(SnapshotBase("s3://b/m/lenet.caffemodel", "examples/mnist/snap", 5), "s3://b/m/snap_iter_5");
  EXPECT_EQ(SnapshotBase("model", "", 1), "model_iter_1");
  EXPECT_EQ(LearnedNetPath("file:///data/out/m_iter_5.caffemodel"), "/data/out/m_iter_5.caffemodel");
  EXPECT_EQ(LearnedNetPath("file:/data/out/m_iter_5.caffemodel.h5"), "/data/out/m_iter_5.caffemodel.h5");
  EXPECT_EQ(LearnedNetPath("s3://b/m_iter_5.caffemodel"), "s3://b/m_iter_5.caffemodel");
  EXPECT_EQ(SnapshotFilesOf("out/m_iter_5", false).state, "out/m_iter_5.solverstate");
  EXPECT_EQ(SnapshotFilesOf("out/m_iter_5", true).model, "out/m_iter_5.caffemodel.h5");
  EXPECT_EQ(LearnedNetCandidates("/ckpt/m_iter_5.solverstate", "out/m_iter_5.caffemodel"),
            (std::vector<std::string>{"/ckpt/m_iter_5.caffemodel", "out/m_iter_5.caffemodel"}));
  EXPECT_EQ(LearnedNetCandidates("/ckpt/m_iter_5.solverstate", "m_iter_5.caffemodel"),  // an older Shoal's
            (std::vector<std::string>{"/ckpt/m_iter_5.caffemodel", "m_iter_5.caffemodel"}));
}

}  // namespace
}  // namespace shoal::train
