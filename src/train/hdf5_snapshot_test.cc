#include "train/hdf5_snapshot.h"

#include <hdf5.h>

#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

#include "testing/scratch_directory.h"

namespace shoal::train {
namespace {

caffe::BlobProto Blob(std::vector<int64_t> shape, std::vector<float> values) {
  caffe::BlobProto b;
  for (int64_t d : shape) b.mutable_shape()->add_dim(d);
  for (float v : values) b.add_data(v);
  return b;
}

// The bytes written to a real file and opened with HDF5's own API: the layout is Caffe's.
class OnDisk {
 public:
  explicit OnDisk(const std::string& bytes) : path_(scratch_ / "snapshot.h5") {
    std::ofstream(path_, std::ios::binary) << bytes;
    file_ = H5Fopen(path_.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  }
  ~OnDisk() {
    if (file_ >= 0) H5Fclose(file_);  // before scratch_ goes
  }
  hid_t file() const { return file_; }

 private:
  testing_support::ScratchDirectory scratch_{"hdf5"};
  std::string path_;
  hid_t file_ = -1;
};

TEST(Hdf5Snapshot, ModelHasCaffesGroupsAndShapedDatasetsAndReadsBack) {
  caffe::NetParameter model;
  auto* conv = model.add_layer();
  conv->set_name("conv1");
  *conv->add_blobs() = Blob({2, 1, 1, 2}, {1, 2, 3, 4});
  *conv->add_blobs() = Blob({2}, {0.5f, -0.5f});
  auto bytes = ModelToHdf5(model);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  EXPECT_TRUE(IsHdf5(*bytes));

  OnDisk disk(*bytes);
  ASSERT_GE(disk.file(), 0);
  hid_t set = H5Dopen2(disk.file(), "/data/conv1/0", H5P_DEFAULT);
  ASSERT_GE(set, 0);
  hid_t space = H5Dget_space(set);
  hsize_t dims[4];
  ASSERT_EQ(H5Sget_simple_extent_ndims(space), 4);
  H5Sget_simple_extent_dims(space, dims, nullptr);
  EXPECT_EQ(dims[0], 2u);
  EXPECT_EQ(dims[3], 2u);
  H5Sclose(space);
  H5Dclose(set);

  auto back = ModelFromHdf5(*bytes);
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->layer_size(), 1);
  ASSERT_EQ(back->layer(0).blobs_size(), 2);
  EXPECT_EQ(back->layer(0).blobs(0).shape().dim_size(), 4);
  EXPECT_EQ(back->layer(0).blobs(0).data(3), 4.0f);
  EXPECT_EQ(back->layer(0).blobs(1).data(1), -0.5f);
}

TEST(Hdf5Snapshot, SharedBlobsAreLeftOutAndReadBackAsPlaceholders) {
  caffe::NetParameter model;
  auto* tower = model.add_layer();
  tower->set_name("ip_p");
  tower->add_blobs();  // blob 0 shared with another layer: Caffe writes only "1"
  *tower->add_blobs() = Blob({1}, {7});
  auto bytes = ModelToHdf5(model);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  OnDisk disk(*bytes);
  EXPECT_EQ(H5Lexists(disk.file(), "/data/ip_p/0", H5P_DEFAULT), 0);
  EXPECT_GT(H5Lexists(disk.file(), "/data/ip_p/1", H5P_DEFAULT), 0);
  auto back = ModelFromHdf5(*bytes);
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->layer(0).blobs_size(), 2);
  EXPECT_EQ(back->layer(0).blobs(0).data_size(), 0);
  EXPECT_EQ(back->layer(0).blobs(1).data(0), 7.0f);
}

TEST(Hdf5Snapshot, SolverStateHasCaffesDatasetsAndShoalsPosition) {
  caffe::SolverState state;
  state.set_iter(500);
  state.set_learned_net("out/lenet_iter_500.caffemodel.h5");
  state.set_current_step(2);
  *state.add_history() = Blob({3}, {1, 2, 3});
  *state.add_history() = Blob({1}, {9});
  state.mutable_shoal_position()->set_epoch(4);
  state.mutable_shoal_position()->set_solver_type("SGD");
  auto bytes = SolverStateToHdf5(state);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();

  OnDisk disk(*bytes);
  int iter = 0;
  hid_t set = H5Dopen2(disk.file(), "iter", H5P_DEFAULT);
  ASSERT_GE(set, 0);
  H5Dread(set, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, &iter);
  H5Dclose(set);
  EXPECT_EQ(iter, 500);
  EXPECT_GT(H5Lexists(disk.file(), "/history/1", H5P_DEFAULT), 0);

  auto back = SolverStateFromHdf5(*bytes);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->iter(), 500);
  EXPECT_EQ(back->learned_net(), "out/lenet_iter_500.caffemodel.h5");
  EXPECT_EQ(back->current_step(), 2);
  ASSERT_EQ(back->history_size(), 2);
  EXPECT_EQ(back->history(0).data(2), 3.0f);
  EXPECT_EQ(back->shoal_position().epoch(), 4);
  EXPECT_EQ(back->shoal_position().solver_type(), "SGD");
}

TEST(Hdf5Snapshot, GarbageAndOtherFilesAreRefusedNotCrashed) {
  EXPECT_FALSE(IsHdf5("not hdf5"));
  auto garbage = ModelFromHdf5(std::string("\x89HDF\r\n\x1a\n") + std::string(300, '\x07'));
  ASSERT_FALSE(garbage.ok());
  EXPECT_NE(garbage.status().message().find("not an HDF5 file"), std::string::npos);
  // A model is not a solver state, and the other way round.
  caffe::NetParameter model;
  model.add_layer()->set_name("fc");
  auto model_bytes = ModelToHdf5(model);
  ASSERT_TRUE(model_bytes.ok());
  auto state = SolverStateFromHdf5(*model_bytes);
  ASSERT_FALSE(state.ok());
  EXPECT_NE(state.status().message().find("iter"), std::string::npos) << state.status().message();
  // Caffe names a group per layer: a '/' in a layer's name cannot be one.
  model.mutable_layer(0)->set_name("inception/1x1");
  auto slash = ModelToHdf5(model);
  ASSERT_FALSE(slash.ok());
  EXPECT_NE(slash.status().message().find("BINARYPROTO"), std::string::npos);
}

}  // namespace
}  // namespace shoal::train
