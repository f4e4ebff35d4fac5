#include "data/output_commit.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/clock.h"
#include "common/files.h"
#include "data/scratch_folder.h"
#include "storage/mem/mem_storage.h"

namespace shoal::data {
namespace {

TEST(OutputCommitTest, SuccessMarkerComesLastAndTemporaryGoes) {
  auto& mem = storage::MemStorage::Shared();
  mem.CreateBucket("commit");
  ScratchFolder local("commit");
  const std::string& dir = local.path();
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
}

TEST(OutputCommitTest, AKilledUploadLeavesNoMarker) {
  auto& mem = storage::MemStorage::Shared();
  mem.CreateBucket("killed");
  ScratchFolder local("commit-k");
  const std::string& dir = local.path();
  ASSERT_TRUE(WriteFileAtomic(dir + "/a", "1").ok());
  ASSERT_TRUE(WriteFileAtomic(dir + "/b", "2").ok());
  ASSERT_TRUE(mem.PutString("mem://killed/out/_SUCCESS", "a\n").ok());
  ASSERT_TRUE(mem.PutString("mem://killed/out/a", "old").ok());
  // Reading the earlier listing (stat, read, list), the marker's delete and the first
  // upload pass, then the storage "dies".
  mem.FailNext(100, Unavailable("connection reset"), 5);
  Status s = CommitFolder(dir, "mem://killed/out", "t", {.parallelism = 1});
  mem.FailNext(0, Status::Ok());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("connection reset"), std::string::npos);
  EXPECT_NE(s.message().find("mem://killed/out"), std::string::npos);
  EXPECT_EQ(mem.Stat("mem://killed/out/_SUCCESS").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(mem.ReadRange("mem://killed/out/a", 0, 10).value(), "old") << "nothing committed outside _temporary";
}

// A local output folder for one test, removed at its end.

std::vector<std::string> KeysUnder(const std::string& prefix) {
  std::vector<std::string> keys;
  for (const auto& k : storage::MemStorage::Shared().Keys()) {
    if (k.starts_with(prefix)) keys.push_back(k);
  }
  return keys;
}

TEST(OutputCommitTest, ACommitReplacesWhatAnEarlierAttemptLeftInItsDestination) {
  auto& mem = storage::MemStorage::Shared();
  mem.CreateBucket("retry");
  // Attempt 1 committed stale.txt, an old model and sub/old.bin (its _SUCCESS lists them);
  // a saved model sits in the URI (from:), worker-10's folder shares the prefix
  // "worker-1", and the user keeps notes.txt there, which no commit put there.
  for (const char* key : {"out/worker-1/stale.txt", "out/worker-1/model.bin", "out/worker-1/sub/old.bin",
                          "out/worker-1/saved-20260101-000000/model.bin", "out/worker-1/notes.txt",
                          "out/worker-10/model.bin"}) {
    ASSERT_TRUE(mem.PutString(std::string("mem://retry/") + key, "attempt 1").ok());
  }
  ASSERT_TRUE(mem.PutString("mem://retry/out/worker-1/_SUCCESS", "model.bin\nstale.txt\nsub/old.bin\n").ok());
  ScratchFolder local("commit-retry");
  local.Write("model.bin", "attempt 2");
  ASSERT_TRUE(CommitFolder(local.path(), "mem://retry/out/worker-1", "worker-1").ok());
  EXPECT_EQ(KeysUnder("retry/"), (std::vector<std::string>{"retry/out/worker-1/_SUCCESS", "retry/out/worker-1/model.bin",
                                                           "retry/out/worker-1/notes.txt",
                                                           "retry/out/worker-1/saved-20260101-000000/model.bin",
                                                           "retry/out/worker-10/model.bin"}))
      << "what attempt 1 committed goes; what no commit put there stays";
  EXPECT_EQ(mem.ReadRange("mem://retry/out/worker-1/model.bin", 0, 100).value(), "attempt 2");
  EXPECT_EQ(mem.ReadRange("mem://retry/out/worker-1/_SUCCESS", 0, 100).value(), "model.bin\n");
}

TEST(OutputCommitTest, ACommitIntoAFolderReplacesAnEarlierAttemptsFiles) {
  ScratchFolder dest("commit-dest");
  ASSERT_TRUE(MakeDirectories(dest.path() + "/worker-0/_temporary/worker-0").ok());
  // Attempt 1 was stopped after copying stale.txt into place, before its _SUCCESS: its
  // listing under _temporary/ names what it put there.
  ASSERT_TRUE(WriteFileAtomic(dest.path() + "/worker-0/stale.txt", "attempt 1").ok());
  ASSERT_TRUE(WriteFileAtomic(dest.path() + "/worker-0/_temporary/committing-worker-0", "stale.txt\n").ok());
  ASSERT_TRUE(WriteFileAtomic(dest.path() + "/worker-0/_temporary/worker-0/big.bin.part", "killed").ok());
  ScratchFolder local("commit-src");
  local.Write("model.bin", "attempt 2");
  ASSERT_TRUE(CommitFolder(local.path(), dest.path() + "/worker-0", "worker-0").ok());
  std::vector<std::string> left;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dest.path())) {
    if (entry.is_regular_file()) left.push_back(std::filesystem::relative(entry.path(), dest.path()).string());
  }
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"worker-0/_SUCCESS", "worker-0/model.bin"}));
  EXPECT_FALSE(std::filesystem::exists(dest.path() + "/worker-0/_temporary")) << "the scratch folder goes";
}

TEST(OutputCommitTest, NothingIsDeletedThroughASymlinkedFolderOfTheDestination) {
  ScratchFolder elsewhere("commit-elsewhere");
  elsewhere.Write("precious.bin", "keep");
  ScratchFolder dest("commit-linked");
  ASSERT_TRUE(MakeDirectories(dest.path() + "/worker-0").ok());
  std::filesystem::create_directory_symlink(elsewhere.path(), dest.path() + "/worker-0/data");
  ScratchFolder local("commit-linked-src");
  local.Write("model.bin", "m");
  ASSERT_TRUE(CommitFolder(local.path(), dest.path() + "/worker-0", "worker-0").ok());
  EXPECT_EQ(ReadFile(elsewhere.path() + "/precious.bin").value(), "keep");
  EXPECT_EQ(ReadFile(dest.path() + "/worker-0/model.bin").value(), "m");
}

TEST(OutputCommitTest, ACommitSweepsTheTemporaryCopiesAndUploadsOfAKilledAttempt) {
  auto& mem = storage::MemStorage::Shared();
  mem.CreateBucket("sweep");
  // What a task killed -9 mid-upload left: whole temporary objects and an unfinished
  // multipart upload.
  ASSERT_TRUE(mem.PutString("mem://sweep/out/_temporary/worker-0/shard-1.bin", std::string(64, 'x')).ok());
  ASSERT_TRUE(mem.PutString("mem://sweep/out/_temporary/worker-0-20260101-000000/m.bin", "x").ok());
  mem.StartUpload("mem://sweep/out/_temporary/worker-0/shard-2.bin");
  mem.StartUpload("mem://sweep/other/_temporary/worker-0/keep.bin");
  ScratchFolder local("commit-sweep");
  local.Write("model.bin", "m");
  ASSERT_TRUE(CommitFolder(local.path(), "mem://sweep/out", "worker-0").ok());
  EXPECT_EQ(KeysUnder("sweep/"), (std::vector<std::string>{"sweep/out/_SUCCESS", "sweep/out/model.bin"}));
  EXPECT_EQ(mem.Uploads(), std::vector<std::string>{"sweep/other/_temporary/worker-0/keep.bin"})
      << "only the destination's unfinished uploads are aborted";
}

TEST(OutputCommitTest, AStoppedCommitRemovesItsTemporaryCopies) {
  auto& mem = storage::MemStorage::Shared();
  mem.CreateBucket("stopped");
  ScratchFolder local("commit-stopped");
  for (int i = 0; i < 4; ++i) local.Write("shard-" + std::to_string(i), std::string(1000, 'x'));
  std::atomic<bool> cancel{false};
  mem.OnUpload([&](const std::string&) { cancel = true; });  // the job is killed during the first upload
  Status s = CommitFolder(local.path(), "mem://stopped/out", "worker-0", {.parallelism = 1, .cancel = &cancel});
  mem.OnUpload(nullptr);
  EXPECT_EQ(s.code(), StatusCode::kAborted) << s.ToString();
  EXPECT_TRUE(KeysUnder("stopped/").empty()) << "no _temporary objects stay behind, and no _SUCCESS";
}

TEST(OutputCommitTest, AFileRewrittenWhileItIsCopiedIsCopiedAgain) {
  auto& mem = storage::MemStorage::Shared();
  mem.CreateBucket("torn");
  ScratchFolder local("commit-torn");
  local.Write("model.txt", "begin 7\n");  // the program is half way through writing it
  int uploads = 0;
  mem.OnUpload([&](const std::string& uri) {
    if (uri.ends_with("model.txt") && ++uploads == 1) {
      std::ofstream(local.path() + "/model.txt", std::ios::app) << "weights 7\nend 7\n";
    }
  });
  Status s = CommitFolder(local.path(), "mem://torn/saved", "worker-0", {.settle = {.live = true}});
  mem.OnUpload(nullptr);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(mem.ReadRange("mem://torn/saved/model.txt", 0, 100).value(), "begin 7\nweights 7\nend 7\n");
  EXPECT_EQ(uploads, 2);
}

TEST(OutputCommitTest, AnEmptyFileBeingWrittenIsCopiedOnceItHasItsContents) {
  auto& mem = storage::MemStorage::Shared();
  mem.CreateBucket("empty");
  ScratchFolder local("commit-empty");
  local.Write("model.txt", "");  // truncated: the program writes it in a moment
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    std::ofstream(local.path() + "/model.txt") << "weights\n";
  });
  Status s = CommitFolder(local.path(), "mem://empty/saved", "worker-0", {.settle = {.live = true}});
  writer.join();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(mem.ReadRange("mem://empty/saved/model.txt", 0, 100).value(), "weights\n") << "not the 0-byte file";
}

TEST(OutputCommitTest, AFileTheProgramRemovesBeforeItsCopyIsLeftOut) {
  auto& mem = storage::MemStorage::Shared();
  mem.CreateBucket("rotated");
  ScratchFolder local("commit-rotated");
  local.Write("ckpt-1.bin", "old");
  local.Write("ckpt-2.bin", "new");
  // While ckpt-1 is copied the program removes ckpt-2 (say, it rotates its checkpoints).
  mem.OnUpload([&](const std::string& uri) {
    if (uri.ends_with("ckpt-1.bin")) std::filesystem::remove(local.path() + "/ckpt-2.bin");
  });
  Status s = CommitFolder(local.path(), "mem://rotated/saved", "worker-0", {.parallelism = 1, .settle = {.live = true}});
  mem.OnUpload(nullptr);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(KeysUnder("rotated/"), (std::vector<std::string>{"rotated/saved/_SUCCESS", "rotated/saved/ckpt-1.bin"}));
  EXPECT_EQ(mem.ReadRange("mem://rotated/saved/_SUCCESS", 0, 100).value(), "ckpt-1.bin\n");
}

TEST(OutputCommitTest, AnEmptyFileLeftAloneIsCommittedEmpty) {
  auto& mem = storage::MemStorage::Shared();
  mem.CreateBucket("quiet");
  ScratchFolder local("commit-quiet");
  local.Write("empty.txt", "");
  struct timespec old[2] = {{::time(nullptr) - 10, 0}, {::time(nullptr) - 10, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, (local.path() + "/empty.txt").c_str(), old, 0), 0);
  ASSERT_TRUE(CommitFolder(local.path(), "mem://quiet/saved", "worker-0", {.settle = {.live = true}}).ok());
  EXPECT_EQ(mem.Stat("mem://quiet/saved/empty.txt").value().size, 0);
}

TEST(OutputCommitTest, AFileKeptEmptyWhileBeingWrittenFailsTheSaveNamingIt) {
  auto& mem = storage::MemStorage::Shared();
  mem.CreateBucket("truncated");
  ScratchFolder local("commit-truncated");
  local.Write("model.txt", "");
  // A clock whose sleeps move it, while the file's modification time stays as recent.
  FakeClock clock(::time(nullptr) * 1000LL);
  Status s = CommitFolder(local.path(), "mem://truncated/saved", "worker-0",
                          {.settle = {.live = true, .quiet_ms = 1'000'000, .max_empty_wait_ms = 500, .clock = &clock}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(local.path() + "/model.txt stayed empty while it was being written"), std::string::npos)
      << s.message();
  EXPECT_TRUE(KeysUnder("truncated/").empty());
}

TEST(OutputCommitTest, AFileThatNeverSettlesFailsTheSaveNamingIt) {
  auto& mem = storage::MemStorage::Shared();
  mem.CreateBucket("busy");
  ScratchFolder local("commit-busy");
  local.Write("log.txt", "0\n");
  local.Write("model.txt", "m\n");
  int writes = 0;
  mem.OnUpload([&](const std::string& uri) {
    if (uri.ends_with("log.txt")) std::ofstream(local.path() + "/log.txt", std::ios::app) << ++writes << "\n";
  });
  FakeClock clock;
  Status s = CommitFolder(local.path(), "mem://busy/saved", "worker-0",
                          {.parallelism = 1, .settle = {.live = true, .max_copies = 4, .clock = &clock}});
  mem.OnUpload(nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(local.path() + "/log.txt kept changing through 4 copies"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("rename it into place"), std::string::npos) << s.message();
  EXPECT_EQ(writes, 4) << "copied up to the bound";
  EXPECT_TRUE(KeysUnder("busy/").empty()) << "no _SUCCESS over a torn file, and no temporary copies";
}

}  // namespace
}  // namespace shoal::data
