#include "storage/storage.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "common/files.h"
#include "storage/glob.h"
#include "storage/mem/mem_storage.h"
#include "testing/scratch_directory.h"

namespace shoal::storage {
namespace {

TEST(GlobTest, StarStaysInOneSegment) {
  EXPECT_TRUE(GlobMatch("s3://b/data/*.csv", "s3://b/data/part-1.csv"));
  EXPECT_FALSE(GlobMatch("s3://b/data/*.csv", "s3://b/data/sub/part-1.csv"));
  EXPECT_TRUE(GlobMatch("s3://b/data/**.csv", "s3://b/data/sub/part-1.csv"));
  EXPECT_TRUE(GlobMatch("/d/part-?.txt", "/d/part-7.txt"));
  EXPECT_FALSE(GlobMatch("/d/part-?.txt", "/d/part-17.txt"));
  EXPECT_TRUE(GlobMatch("/d/[ab]*", "/d/beta"));
  EXPECT_FALSE(GlobMatch("/d/[!ab]*", "/d/beta"));
  EXPECT_TRUE(GlobMatch("/d/[0-9]", "/d/5"));
  EXPECT_EQ(GlobPrefix("s3://b/data/x*/y"), "s3://b/data/");
  EXPECT_EQ(GlobPrefix("*.csv"), "");
}

TEST(UriTest, SchemesAndJoin) {
  EXPECT_EQ(UriScheme("s3://b/k"), "s3");
  EXPECT_EQ(UriScheme("/a/b"), "");
  EXPECT_EQ(UriScheme("file:///a"), "file");
  EXPECT_EQ(JoinUri("s3://b/out/", "/x"), "s3://b/out/x");
  EXPECT_EQ(JoinUri("s3://b/out", "x"), "s3://b/out/x");
  Result<std::shared_ptr<Storage>> bad = OpenStorage("hdfs://nn/x");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("hdfs://"), std::string::npos);
}

bool Write(const std::filesystem::path& path, const std::string& content) {
  return MakeDirectories(path.parent_path()).ok() && WriteFileAtomic(path, content).ok();
}

class FileStorageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Write(dir_ / "data/a.csv", "1\n2\n"));
    ASSERT_TRUE(Write(dir_ / "data/b.csv", "3\n"));
    ASSERT_TRUE(Write(dir_ / "data/sub/c.csv", "4\n"));
    ASSERT_TRUE(Write(dir_ / "data/readme.txt", "x"));
  }
  testing_support::ScratchDirectory scratch_{"storage"};
  std::filesystem::path dir_ = scratch_.path();
};

TEST_F(FileStorageTest, ExpandsGlobsFoldersAndFileUris) {
  auto csv = ExpandUri((dir_ / "data/*.csv").string());
  ASSERT_TRUE(csv.ok()) << csv.status().ToString();
  ASSERT_EQ(csv->size(), 2u);
  EXPECT_EQ((*csv)[0].uri, (dir_ / "data/a.csv").string());
  EXPECT_EQ((*csv)[0].size, 4);
  auto all = ExpandUri("file://" + (dir_ / "data").string());
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 4u);
  EXPECT_EQ((*all)[0].uri, "file://" + (dir_ / "data/a.csv").string());
  auto none = ExpandUri((dir_ / "data/*.parquet").string());
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
  EXPECT_NE(none.status().message().find("*.parquet"), std::string::npos);
}

TEST_F(FileStorageTest, PutGetCopyDeleteAndRead) {
  auto storage = OpenStorage(dir_.string()).value();
  std::string out = (dir_ / "out/model.bin").string();
  ASSERT_TRUE(storage->PutString(out, "weights").ok());
  ASSERT_TRUE(storage->Copy(out, out + ".copy").ok());
  ASSERT_TRUE(storage->GetToFile(out + ".copy", (dir_ / "local/m").string()).ok());
  EXPECT_EQ(ReadFile((dir_ / "local/m").string()).value(), "weights");
  EXPECT_EQ(storage->ReadRange(out, 2, 3).value(), "igh");
  auto reader = storage->OpenReader(out).value();
  char buf[16];
  EXPECT_EQ(reader->Read(buf, sizeof(buf)).value(), 7u);
  EXPECT_EQ(reader->Read(buf, sizeof(buf)).value(), 0u);
  ASSERT_TRUE(storage->Delete(out).ok());
  EXPECT_EQ(storage->Stat(out).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(storage->Delete(out).ok()) << "deleting a missing file is not an error";
}

TEST_F(FileStorageTest, CopiesKeepTheSourcesPermissionBits) {
  auto storage = OpenStorage(dir_.string()).value();
  std::string secret = (dir_ / "data/shadow").string();
  ASSERT_TRUE(Write(secret, "root:*:"));
  for (unsigned mode : {0640u, 0600u, 0755u, 0444u}) {
    ASSERT_EQ(::chmod(secret.c_str(), mode | 04000), 0) << "a set-id bit is never copied";
    std::string local = (dir_ / ("local/shadow-" + std::to_string(mode))).string();
    ASSERT_TRUE(storage->GetToFile(secret, local).ok());
    struct stat st;
    ASSERT_EQ(::stat(local.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, mode) << "downloaded with mode " << std::oct << (st.st_mode & 07777);
    ASSERT_TRUE(storage->Copy(secret, local + ".copy").ok());
    ASSERT_EQ(::stat((local + ".copy").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, mode) << "copied with mode " << std::oct << (st.st_mode & 07777);
  }
}

TEST(MemStorageTest, BucketsPrefixesAndInjectedFailures) {
  MemStorage& mem = MemStorage::Shared();
  mem.CreateBucket("unit");
  ASSERT_TRUE(mem.PutString("mem://unit/in/x-1", "abc").ok());
  ASSERT_TRUE(mem.PutString("mem://unit/in/x-2", "defg").ok());
  ASSERT_TRUE(mem.PutString("mem://unit/other", "z").ok());
  auto listed = ExpandUri("mem://unit/in/x-*");
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[1].size, 4);
  auto missing = ExpandUri("mem://nobucket/x");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("nobucket"), std::string::npos);
  mem.FailNext(1, Unavailable("injected"));
  EXPECT_EQ(mem.Stat("mem://unit/other").status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(mem.Stat("mem://unit/other").ok());
}

}  // namespace
}  // namespace shoal::storage
