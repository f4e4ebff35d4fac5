#include "data/output_commit.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "common/files.h"
#include "storage/mem/mem_storage.h"

namespace shoal::data {
namespace {

TEST(OutputCommitTest, SuccessMarkerComesLastAndTemporaryGoes) {
  auto& mem = storage::MemStorage::Shared();
  mem.CreateBucket("commit");
  std::string dir = std::filesystem::temp_directory_path() / ("shoal-commit-" + std::to_string(::getpid()));
  ASSERT_TRUE(MakeDirectories(dir + "/sub").ok());
  ASSERT_TRUE(WriteFileAtomic(dir + "/model.bin", "w").ok());
  ASSERT_TRUE(WriteFileAtomic(dir + "/sub/opt.bin", "o").ok());
  ASSERT_TRUE(CommitFolder(dir, "mem://commit/out/worker-0", "t1").ok());
  std::vector<std::string> keys;
  for (const auto& k : mem.Keys()) {
    if (k.starts_with("commit/")) keys.push_back(k);
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"commit/out/worker-0/_SUCCESS", "commit/out/worker-0/model.bin",
                                                  "commit/out/worker-0/sub/opt.bin"}));
  EXPECT_EQ(mem.ReadRange("mem://commit/out/worker-0/_SUCCESS", 0, 100).value(), "model.bin\nsub/opt.bin\n");

  std::filesystem::remove_all(dir);
}

TEST(OutputCommitTest, AKilledUploadLeavesNoMarker) {
  auto& mem = storage::MemStorage::Shared();
  mem.CreateBucket("killed");
  std::string dir = std::filesystem::temp_directory_path() / ("shoal-commit-k-" + std::to_string(::getpid()));
  ASSERT_TRUE(MakeDirectories(dir).ok());
  ASSERT_TRUE(WriteFileAtomic(dir + "/a", "1").ok());
  ASSERT_TRUE(WriteFileAtomic(dir + "/b", "2").ok());
  ASSERT_TRUE(mem.PutString("mem://killed/out/_SUCCESS", "a\n").ok());
  ASSERT_TRUE(mem.PutString("mem://killed/out/a", "old").ok());
  // The marker's delete and the first upload pass, then the storage "dies".
  mem.FailNext(100, Unavailable("connection reset"), 2);
  Status s = CommitFolder(dir, "mem://killed/out", "t", 1);
  mem.FailNext(0, Status::Ok());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("connection reset"), std::string::npos);
  EXPECT_NE(s.message().find("mem://killed/out"), std::string::npos);
  EXPECT_EQ(mem.Stat("mem://killed/out/_SUCCESS").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(mem.ReadRange("mem://killed/out/a", 0, 10).value(), "old") << "nothing committed outside _temporary";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace shoal::data
