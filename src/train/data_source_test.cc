#include "train/data_source.h"

#include <gtest/gtest.h>
#include <lmdb.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "train/caffe.pb.h"
#include "storage/mem/mem_storage.h"
#include "testing/scratch_directory.h"
#include "train/partition.h"
#include "train/uri.h"

namespace shoal::train {
namespace {

void WriteIdx(const std::string& path, std::vector<uint32_t> dims, const std::vector<uint8_t>& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  unsigned char magic[4] = {0, 0, 8, static_cast<unsigned char>(dims.size())};
  gzwrite(f, magic, 4);
  for (uint32_t d : dims) {
    unsigned char be[4] = {static_cast<unsigned char>(d >> 24), static_cast<unsigned char>(d >> 16),
                           static_cast<unsigned char>(d >> 8), static_cast<unsigned char>(d)};
    gzwrite(f, be, 4);
  }
  gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(f);
}

TEST(DataSource, IdxReadsOnlyTheRangeAndItsLabels) {
  testing_support::ScratchDirectory scratch("train");
  const std::string& dir = scratch.path();
  std::vector<uint8_t> pixels(5 * 2 * 3), labels = {0, 1, 2, 3, 4};
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i);
  WriteIdx(dir + "/t-images-idx3-ubyte.gz", {5, 2, 3}, pixels);
  WriteIdx(dir + "/t-labels-idx1-ubyte.gz", {5}, labels);
  DataSpec spec{dir + "/t-images-idx3-ubyte.gz"};
  EXPECT_EQ(ResolveBackend(spec), Backend::kIdx);
  ASSERT_EQ(*CountRecords(spec), 5);
  auto data = LoadRange(spec, 2, 4);
  ASSERT_TRUE(data.ok()) << data.status().message();
  EXPECT_EQ(data->size(), 2);
  EXPECT_EQ(data->height, 2);
  EXPECT_EQ(data->width, 3);
  EXPECT_EQ(data->labels, (std::vector<int>{2, 3}));
  EXPECT_EQ(data->bytes[0], 12);
  // scale and mean_value; the centre crop in TEST.
  Transform t;
  t.scale = 0.5f;
  t.mean_value = {2.0f};
  t.crop_size = 2;
  auto shape = TransformedShape(*data, t);
  ASSERT_TRUE(shape.ok());
  EXPECT_EQ(shape->size(), 4);
  std::vector<float> out(8), lab(2);
  FillBatch(*data, t, false, 0, 2, 2, out.data(), lab.data());
  EXPECT_FLOAT_EQ(out[0], (12 - 2) * 0.5f);  // crop x0 = (3-2)/2 = 0, y0 = 0
  EXPECT_FLOAT_EQ(lab[1], 3);
}

// A damaged or hostile IDX header: refused by name, never allocated.
TEST(DataSource, IdxHeadersPromisingTooMuchAreRefused) {
  testing_support::ScratchDirectory scratch("train");
  const std::string& dir = scratch.path();
  WriteIdx(dir + "/labels-idx1", {3}, {0, 1, 2});
  DataSpec spec{dir + "/huge-idx3", dir + "/labels-idx1"};
  WriteIdx(spec.source, {3, 65536, 65536}, {1, 2, 3});  // 4 GiB an image
  auto huge = LoadRange(spec, 0, 3);
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("larger than 256 MiB"), std::string::npos) << huge.status().message();
  WriteIdx(spec.source, {3, 0, 28}, {});
  EXPECT_FALSE(LoadRange(spec, 0, 3).ok());
  // a header that promises more images than the file holds ends in "truncated"
  WriteIdx(spec.source, {3, 4096, 4096}, {1, 2, 3});
  auto truncated = LoadRange(spec, 0, 3);
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.status().message().find("truncated"), std::string::npos) << truncated.status().message();
  WriteIdx(spec.source, {3, 1, 1}, {1, 2, 3});
  EXPECT_TRUE(LoadRange(spec, 0, 3).ok());
  auto beyond = LoadRange(spec, 2, 5);
  ASSERT_FALSE(beyond.ok());
  EXPECT_NE(beyond.status().message().find("of an IDX file of 3"), std::string::npos) << beyond.status().message();
}

TEST(DataSource, MirrorFlipsSomeTrainingImagesDeterministically) {
  Dataset d;
  d.channels = 1; d.height = 1; d.width = 3; d.bytes = {};
  for (int i = 0; i < 64; ++i) {
    d.bytes.insert(d.bytes.end(), {1, 2, 3});
    d.labels.push_back(0);
  }
  Transform t;
  t.mirror = true;
  std::vector<float> a(64 * 3), b(64 * 3), l(64);
  FillBatch(d, t, true, 42, 0, 64, a.data(), l.data());
  FillBatch(d, t, true, 42, 0, 64, b.data(), l.data());
  EXPECT_EQ(a, b);
  int flipped = 0;
  for (int i = 0; i < 64; ++i) flipped += a[i * 3] == 3;
  EXPECT_GT(flipped, 10);
  EXPECT_LT(flipped, 54);
}

TEST(DataSource, MeanImageIsSubtractedAtEachElementsOwnPositionBeforeScaling) {
  Dataset d;
  d.channels = 1; d.height = 2; d.width = 3;
  d.bytes = {10, 20, 30, 40, 50, 60};
  d.labels = {4};
  Transform t;
  t.scale = 0.5f;
  t.mean_image = {1, 2, 3, 4, 5, 6};
  t.crop_size = 2;  // TEST: the centre crop, rows 0-1, columns 0-1
  ASSERT_TRUE(TransformedShape(d, t).ok());
  std::vector<float> out(4), label(1);
  FillBatch(d, t, false, 0, 0, 1, out.data(), label.data());
  EXPECT_EQ(out, (std::vector<float>{4.5f, 9.0f, 18.0f, 22.5f}));
  t.mean_image = {1, 2, 3};
  auto wrong = TransformedShape(d, t);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("mean_file holds 3 values"), std::string::npos) << wrong.status().message();
}

TEST(DataSource, CsvRowsWithHeaderAndShape) {
  testing_support::ScratchDirectory scratch("train");
  std::string path = scratch / "rows.csv";
  std::ofstream(path) << "label,a,b,c,d\n1,0.5,1,2,3\n0,4,5,6,7\n\n2,8,9,10,11\n";
  DataSpec spec{path};
  spec.channels = 1; spec.height = 2; spec.width = 2;
  EXPECT_EQ(*CountRecords(spec), 3);
  auto data = LoadRange(spec, 1, 3);
  ASSERT_TRUE(data.ok()) << data.status().message();
  EXPECT_EQ(data->labels, (std::vector<int>{0, 2}));
  EXPECT_EQ(data->floats[4], 8);
  std::ofstream(path, std::ios::app) << "1,2\n";
  auto bad = LoadRange(spec, 0, 4);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("rows.csv:6:"), std::string::npos) << bad.status().message();
  for (const char* label : {"-1", "1.5", "1e20", "nan", "inf"}) {
    std::ofstream(path) << "1,2\n" << label << ",3\n";
    auto refused = LoadRange(DataSpec{path}, 0, 2);
    ASSERT_FALSE(refused.ok()) << label;
    EXPECT_NE(refused.status().message().find("rows.csv:2: the label"), std::string::npos) << refused.status().message();
  }
}

// Writes the Datums into a new LMDB at dir, keyed in order.
void WriteLmdb(const std::string& dir, const std::vector<caffe::Datum>& datums) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  MDB_env* env;
  ASSERT_EQ(mdb_env_create(&env), 0);
  mdb_env_set_mapsize(env, 1 << 24);
  ASSERT_EQ(mdb_env_open(env, dir.c_str(), 0, 0664), 0);
  MDB_txn* txn;
  MDB_dbi dbi;
  mdb_txn_begin(env, nullptr, 0, &txn);
  mdb_dbi_open(txn, nullptr, 0, &dbi);
  for (size_t i = 0; i < datums.size(); ++i) {
    std::string key = "0000000" + std::to_string(i), value = datums[i].SerializeAsString();
    MDB_val k{key.size(), key.data()}, v{value.size(), value.data()};
    ASSERT_EQ(mdb_put(txn, dbi, &k, &v, 0), 0);
  }
  mdb_txn_commit(txn);
  mdb_env_close(env);
}

TEST(DataSource, LmdbOfCaffeDatums) {
  testing_support::ScratchDirectory scratch("train");
  std::string dir = scratch / "lmdb";
  std::vector<caffe::Datum> datums(4);
  for (int i = 0; i < 4; ++i) {
    datums[i].set_channels(1); datums[i].set_height(1); datums[i].set_width(2);
    datums[i].set_data(std::string{static_cast<char>(i), static_cast<char>(10 + i)});
    datums[i].set_label(i % 2);
  }
  WriteLmdb(dir, datums);
  DataSpec spec{"file://" + dir};
  EXPECT_EQ(ResolveBackend(spec), Backend::kLmdb);
  EXPECT_EQ(*CountRecords(spec), 4);
  auto data = LoadRange(spec, 1, 3);
  ASSERT_TRUE(data.ok()) << data.status().message();
  EXPECT_EQ(data->labels, (std::vector<int>{1, 0}));
  EXPECT_EQ(data->bytes, (std::vector<uint8_t>{1, 11, 2, 12}));
  // a Datum whose shape overflows, or is negative, is refused by name
  for (int32_t dim : {-1, 0, 2000000000}) {
    datums[0].set_height(dim);
    datums[0].set_width(dim);
    WriteLmdb(dir, datums);
    auto refused = LoadRange(spec, 0, 4);
    ASSERT_FALSE(refused.ok()) << dim;
    EXPECT_NE(refused.status().message().find("record 0 (key '00000000') has shape"), std::string::npos)
        << refused.status().message();
  }
}

TEST(DataSource, StorageUrisAreFetchedOnceAndWrittenWhole) {
  // In a task, the local copy goes to $SHOAL_TASK_DIR/train-cache.
  testing_support::ScratchDirectory task_dir("train-task");
  ASSERT_EQ(setenv("SHOAL_TASK_DIR", task_dir.path().c_str(), 1), 0);
  storage::MemStorage::Shared().CreateBucket("train-test");
  ASSERT_TRUE(WriteFileAtomic("mem://train-test/in/rows.csv", "3,1,2\n4,5,6\n").ok());
  DataSpec spec{"mem://train-test/in/rows.csv"};
  EXPECT_EQ(ResolveBackend(spec), Backend::kCsv);
  EXPECT_EQ(*CountRecords(spec), 2);
  auto data = LoadRange(spec, 1, 2);
  ASSERT_TRUE(data.ok()) << data.status().message();
  EXPECT_EQ(data->labels, (std::vector<int>{4}));
  EXPECT_EQ(*ReadFileBytes("mem://train-test/in/rows.csv"), "3,1,2\n4,5,6\n");
  EXPECT_FALSE(CheckUri("gopher://x/y", "model").ok());
  EXPECT_EQ(UriJoin(UriDir("s3://b/models/m.caffemodel"), "m_iter_5.solverstate"), "s3://b/models/m_iter_5.solverstate");
  unsetenv("SHOAL_TASK_DIR");
}

TEST(DataSource, OutsideATaskRemoteInputsAreCachedInAFolderOfTheProcesssOwn) {
  // Run by hand, outside a job: no SHOAL_TASK_DIR. The copy must not come from, or go to, a
  // folder other accounts can write: the fixed /tmp/shoal-train-cache of earlier versions
  // handed a run whatever was planted there under the object's name.
  ASSERT_EQ(unsetenv("SHOAL_TASK_DIR"), 0);
  storage::MemStorage::Shared().CreateBucket("train-test");
  const std::string uri = "mem://train-test/private/rows.csv";
  ASSERT_TRUE(WriteFileAtomic(uri, "7,8\n").ok());
  const auto planted = std::filesystem::path("/tmp/shoal-train-cache") / std::to_string(std::hash<std::string>{}(uri));
  std::filesystem::create_directories(planted);
  std::ofstream(planted / "rows.csv") << "planted by another account\n";

  auto copy = LocalCopy(uri);
  ASSERT_TRUE(copy.ok()) << copy.status().ToString();
  EXPECT_EQ(*ReadFileBytes(uri), "7,8\n");
  const auto folder = std::filesystem::path(*copy).parent_path().parent_path();
  EXPECT_TRUE(folder.filename().string().starts_with("shoal-train-cache-")) << *copy;
  EXPECT_TRUE(std::filesystem::equivalent(folder.parent_path(), std::filesystem::temp_directory_path())) << *copy;
  struct stat st {};
  ASSERT_EQ(stat(folder.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u) << "only this account may read or add a copy";
  EXPECT_EQ(st.st_uid, getuid());
  std::filesystem::remove_all(planted);
  std::error_code ignored;
  std::filesystem::remove(planted.parent_path(), ignored);  // when nothing else is in it
}

TEST(Partition, SameReplicaReadsTheSameRecordsWhateverTheSplit) {
  auto a = MakeTrainLayout(1000, 2, 2, 10);  // 2 workers x 2 devices
  auto b = MakeTrainLayout(1000, 1, 4, 10);  // 1 worker x 4 devices
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->steps_per_epoch, 25);
  for (int g = 0; g < 4; ++g) {
    for (int64_t it : {0, 7, 25, 26}) EXPECT_EQ(a->BatchStart(g, it), b->BatchStart(g, it));
  }
  EXPECT_EQ(a->WorkerBegin(1), 500);
  EXPECT_EQ(a->WorkerEnd(1), 1000);
  EXPECT_EQ(a->BatchStart(3, 25), 750);  // epoch 2 starts the shard again
  EXPECT_FALSE(MakeTrainLayout(30, 2, 2, 10).ok());
  EXPECT_EQ(EvalRange(10, 3, 2).begin, 6);
  EXPECT_EQ(EvalRange(10, 3, 2).end, 10);
}

}  // namespace
}  // namespace shoal::train
