#include "train/train_flags.h"

#include <gtest/gtest.h>

namespace shoal::train {
namespace {

TEST(TrainFlags, CaffeOnSparkOptions) {
  auto f = ParseTrainFlags({"-train", "-features", "ip1,ip2", "-label", "label", "-outputFormat", "csv", "-conf",
                            "solver.prototxt", "-devices", "2", "-model", "file:///tmp/m.caffemodel", "-output", "/tmp/out"});
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_TRUE(f->train);
  EXPECT_EQ(f->features, (std::vector<std::string>{"ip1", "ip2"}));
  EXPECT_EQ(f->output_format, OutputFormat::kCsv);
  EXPECT_EQ(f->devices, 2);
  EXPECT_EQ(f->model, "file:///tmp/m.caffemodel");
}

TEST(TrainFlags, MistakesAreRefusedByName) {
  auto unknown = ParseTrainFlags({"-train", "-conf", "s", "-model", "m", "-gpu", "0"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("'-gpu'"), std::string::npos);
  EXPECT_FALSE(ParseTrainFlags({"-train", "-model", "m"}).ok());                   // no -conf
  EXPECT_FALSE(ParseTrainFlags({"-conf", "s"}).ok());                              // nothing to do
  EXPECT_FALSE(ParseTrainFlags({"-train", "-conf", "s", "-model", "m", "-devices", "0"}).ok());
  EXPECT_FALSE(ParseTrainFlags({"-test", "-conf", "s"}).ok());                     // no model
  EXPECT_FALSE(ParseTrainFlags({"-features", "a", "-conf", "s", "-model", "m"}).ok());  // no output
  EXPECT_FALSE(ParseTrainFlags({"-train", "-conf", "s", "-model", "m", "-outputFormat", "xml"}).ok());
  EXPECT_FALSE(ParseTrainFlags({"-train", "-conf", "s", "-model", "m", "-clusterSize", "2"}).ok());
}

TEST(TrainFlags, ByHandCluster) {
  auto f = ParseTrainFlags({"--train", "--conf=s", "-model", "m", "-clusterSize", "2", "-rank", "1", "-rendezvous", "/tmp/r"});
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->cluster_size, 2);
  EXPECT_EQ(f->rank, 1);
  EXPECT_EQ(f->conf, "s");
}

}  // namespace
}  // namespace shoal::train
