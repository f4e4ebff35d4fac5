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
}

TEST(TrainFlags, CaffeOnSparksOwnOptions) {
  auto f = ParseTrainFlags({"-train", "-persistent", "-conf", "s", "-model", "m", "-connection", "ethernet",
                            "-lmdb_partitions", "2", "-clusterSize", "2", "-devices", "1"});
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->lmdb_partitions, 2);
  EXPECT_TRUE(ParseTrainFlags({"-train", "-conf", "s", "-model", "m", "-connection", "ETHERNET"}).ok());
  const std::pair<std::vector<std::string>, const char*> refused[] = {
      {{"-connection", "infiniband"}, "-connection infiniband: shoal train's collectives run over TCP"},
      {{"-connection", "rdma"}, "-connection is ethernet"},
      {{"-resize"}, "-resize resizes encoded images"},
      {{"-imageRoot", "/data/images"}, "-imageRoot belongs to CaffeOnSpark's conversion tools"},
      {{"-labelFile", "labels.txt"}, "-labelFile belongs to CaffeOnSpark's conversion tools"},
      {{"-lmdb_partitions", "0"}, "-lmdb_partitions takes a whole number >= 1"},
      {{"-persistent=yes"}, "-persistent takes no value"},
  };
  for (const auto& [extra, want] : refused) {
    std::vector<std::string> args = {"-train", "-conf", "s", "-model", "m"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto bad = ParseTrainFlags(args);
    ASSERT_FALSE(bad.ok()) << extra[0];
    EXPECT_NE(bad.status().message().find(want), std::string::npos) << bad.status().message();
  }
  // -test with -features: the features only, as CaffeOnSpark does.
  auto both = ParseTrainFlags({"-test", "-features", "ip", "-conf", "s", "-model", "m", "-output", "o"});
  ASSERT_TRUE(both.ok()) << both.status().message();
  EXPECT_FALSE(both->test);
  EXPECT_EQ(both->warnings.size(), 1u);
}

TEST(TrainFlags, ClusterOptionsAgainstTheJob) {
  auto sized = *ParseTrainFlags({"-train", "-conf", "s", "-model", "m", "-clusterSize", "3"});
  // In a Shoal job -clusterSize needs no -rank or -rendezvous, but must be the job's size.
  EXPECT_TRUE(CheckClusterFlags(sized, 3).ok());
  auto other = CheckClusterFlags(sized, 2);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.message().find("-clusterSize 3 does not match this Shoal job's 2 workers: give -clusterSize 2"),
            std::string::npos)
      << other.message();
  // Outside a job it needs them.
  auto alone = CheckClusterFlags(sized, 0);
  ASSERT_FALSE(alone.ok());
  EXPECT_NE(alone.message().find("needs -rank R and -rendezvous DIR"), std::string::npos) << alone.message();
  auto by_hand = *ParseTrainFlags({"-train", "-conf", "s", "-model", "m", "-clusterSize", "2", "-rank", "0", "-rendezvous", "/r"});
  EXPECT_TRUE(CheckClusterFlags(by_hand, 0).ok());
  EXPECT_FALSE(CheckClusterFlags(by_hand, 2).ok());  // -rank in a job
  // -lmdb_partitions is the worker count.
  auto parts = *ParseTrainFlags({"-train", "-conf", "s", "-model", "m", "-lmdb_partitions", "4"});
  EXPECT_TRUE(CheckClusterFlags(parts, 4).ok());
  auto wrong = CheckClusterFlags(parts, 0);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.message().find("one contiguous part per worker, 1 here; give -lmdb_partitions 1"), std::string::npos)
      << wrong.message();
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
