#include "isolation/image_store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "common/files.h"
#include "testing/scratch_directory.h"

namespace shoal {
namespace {

const std::string kGoodId = std::string(64, 'a');
const std::string kNoShellId = std::string(64, 'b');

// A folder with a fake podman (two images: localhost/good:1 with /bin/sh, localhost/nosh:1
// without) and a fake runc, and the cache.
class ImageStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The images' files: good has /bin -> usr/bin and /usr/bin/sh -> /usr/bin/dash (absolute).
    std::filesystem::create_directories(dir_ + "/good/usr/bin");
    WriteExecutable(dir_ + "/good/usr/bin/dash", "#!/bin/true\n");
    std::filesystem::create_symlink("/usr/bin/dash", dir_ + "/good/usr/bin/sh");
    std::filesystem::create_symlink("usr/bin", dir_ + "/good/bin");
    std::filesystem::create_directories(dir_ + "/nosh/etc");
    ASSERT_TRUE(WriteFileAtomic(dir_ + "/nosh/etc/hostname", "x\n").ok());
    std::string podman = R"SH(#!/bin/sh
D=@DIR@
echo "$*" >> $D/podman.calls
case "$1 $2" in
  "image inspect") case "$5" in
      localhost/good:1) echo @GOOD@ ;;
      localhost/nosh:1) echo @NOSH@ ;;
      *) echo "Error: $5: image not known" >&2; exit 125 ;;
    esac ;;
  "create --quiet") echo "$3" > $D/created; echo @CONTAINER@ ;;
  export*) case "$(cat $D/created)" in
      localhost/good:1) tar -C $D/good -c . ;;
      *) tar -C $D/nosh -c . ;;
    esac ;;
  "rm --force") ;;
  "info --format") echo $D/store/overlay ;;
  *) exit 1 ;;
esac
)SH";
    for (auto [from, to] : std::vector<std::pair<std::string, std::string>>{
             {"@DIR@", dir_}, {"@GOOD@", kGoodId}, {"@NOSH@", kNoShellId}, {"@CONTAINER@", std::string(64, 'c')}}) {
      for (size_t at; (at = podman.find(from)) != std::string::npos;) podman.replace(at, from.size(), to);
    }
    WriteExecutable(dir_ + "/podman", podman);
    WriteExecutable(dir_ + "/runc", "#!/bin/sh\necho 'runc version 1.1.5'\n");
    ASSERT_TRUE(MakeDirectories(dir_ + "/store/overlay-images").ok());
    ASSERT_TRUE(WriteFileAtomic(dir_ + "/store/overlay-images/images.json", "[]").ok());
  }

  void WriteExecutable(const std::string& path, const std::string& text) {
    ASSERT_TRUE(WriteFileAtomic(path, text).ok());
    chmod(path.c_str(), 0755);
  }
  ImageStoreOptions Options() { return {.cache_dir = dir_ + "/cache", .podman = dir_ + "/podman", .runc = dir_ + "/runc"}; }
  int Calls(const std::string& start) {
    std::ifstream calls(dir_ + "/podman.calls");
    int n = 0;
    for (std::string line; std::getline(calls, line);) n += line.starts_with(start);
    return n;
  }
  int Extractions() { return Calls("create "); }
  JobSpec TwoRoles() {
    JobSpec spec;
    spec.image = ImageSpec{"localhost/good:1", "", ""};
    spec.roles.push_back(RoleSpec{.name = "worker"});
    spec.roles.push_back(RoleSpec{.name = "ps"});
    spec.roles.back().image = ImageSpec{"localhost/good:1", "", ""};
    return spec;
  }

  testing_support::ScratchDirectory scratch_{"images"};
  std::string dir_ = scratch_.path();
};

TEST_F(ImageStoreTest, ResolvesEveryImageOfTheSpecToItsIdAndRootExtractedOnce) {
  ImageStore store(Options(), RealProcessLauncher::Instance());
  JobSpec spec = TwoRoles();
  ASSERT_TRUE(store.Resolve(spec).ok());
  std::string rootfs = dir_ + "/cache/" + kGoodId + "/rootfs";
  EXPECT_EQ(spec.image->id, kGoodId);
  EXPECT_EQ(spec.image->rootfs, rootfs);
  EXPECT_EQ(spec.roles[1].image->rootfs, rootfs);
  EXPECT_EQ(spec.ImageOf(spec.roles[0])->rootfs, rootfs);
  EXPECT_TRUE(std::filesystem::exists(rootfs + "/usr/bin/dash"));
  EXPECT_TRUE(std::filesystem::is_regular_file(rootfs + "/etc/hosts")) << "a mount point for the host's file";
  EXPECT_TRUE(std::filesystem::is_directory(rootfs + dir_)) << "the jobs folder, the cache's parent";
  struct stat st {};
  ASSERT_EQ(stat((dir_ + "/cache/" + kGoodId).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u) << "every job's account reads the root";
  JobSpec again = TwoRoles();
  ASSERT_TRUE(store.Resolve(again).ok());
  EXPECT_EQ(Extractions(), 1) << "one extraction per image id";
  // No scratch folder is left beside the image.
  int entries = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir_ + "/cache")) entries += !entry.path().empty();
  EXPECT_EQ(entries, 1);
}

TEST_F(ImageStoreTest, ANameIsLookedUpAgainOnlyWhenPodmansStorageChanged) {
  ImageStore store(Options(), RealProcessLauncher::Instance());
  for (int i = 0; i < 3; ++i) {
    JobSpec spec = TwoRoles();
    ASSERT_TRUE(store.Resolve(spec).ok());
  }
  EXPECT_EQ(Calls("image inspect"), 1);
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/store/overlay-images/images.json", "[{\"names\": [\"retagged\"]}]").ok());
  JobSpec spec = TwoRoles();
  ASSERT_TRUE(store.Resolve(spec).ok());
  EXPECT_EQ(Calls("image inspect"), 2) << "an image was added, removed or tagged: the name may mean another";
  EXPECT_EQ(Calls("info"), 1);
}

TEST_F(ImageStoreTest, AnImageNotInStorageIsRefusedWithItsNameAndHowToBringIt) {
  ImageStore store(Options(), RealProcessLauncher::Instance());
  JobSpec spec = TwoRoles();
  spec.roles[1].image->name = "localhost/missing:2";
  Status s = store.Resolve(spec);
  ASSERT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("roles.ps.image: image 'localhost/missing:2'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("image not known"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("podman load"), std::string::npos) << s.message();
}

TEST_F(ImageStoreTest, AnImageWithoutAShellIsRefused) {
  ImageStore store(Options(), RealProcessLauncher::Instance());
  JobSpec spec = TwoRoles();
  spec.image->name = "localhost/nosh:1";
  Status s = store.Resolve(spec);
  ASSERT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("image: image 'localhost/nosh:1' has no /bin/sh"), std::string::npos) << s.message();
}

TEST_F(ImageStoreTest, WithoutRuncAJobNamingAnImageIsRefusedAndOneNamingNoneIsNot) {
  ImageStoreOptions options = Options();
  options.runc = dir_ + "/no-runc-here";
  ImageStore store(options, RealProcessLauncher::Instance());
  JobSpec spec = TwoRoles();
  Status s = store.Resolve(spec);
  ASSERT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("apt-get install runc"), std::string::npos) << s.message();
  JobSpec plain;
  plain.roles.push_back(RoleSpec{.name = "worker"});
  EXPECT_TRUE(store.Resolve(plain).ok());
  EXPECT_EQ(Extractions(), 0);
}

TEST_F(ImageStoreTest, LinksAreFollowedInsideTheRootNeverOnTheHost) {
  std::string root = dir_ + "/good";
  EXPECT_TRUE(ExecutableInRoot(root, "/bin/sh"));  // /bin -> usr/bin, sh -> /usr/bin/dash
  EXPECT_TRUE(ExecutableInRoot(root, "/usr/bin/../bin/dash"));
  EXPECT_FALSE(ExecutableInRoot(root, "/usr/bin"));  // a folder
  // A link to a path that exists on the host but not in the root.
  std::filesystem::create_symlink("/usr/bin/env", root + "/usr/bin/hostenv");
  EXPECT_FALSE(ExecutableInRoot(root, "/usr/bin/hostenv"));
  std::filesystem::create_symlink("../../../../../../usr/bin/env", root + "/usr/bin/climb");
  EXPECT_FALSE(ExecutableInRoot(root, "/usr/bin/climb")) << ".. stops at the root";
  std::filesystem::create_symlink("loop", root + "/usr/bin/loop");
  EXPECT_FALSE(ExecutableInRoot(root, "/usr/bin/loop"));
  EXPECT_FALSE(ExecutableInRoot(dir_ + "/nosh", "/bin/sh"));
}

TEST_F(ImageStoreTest, MountPointsAreMadeInsideTheRootAndNeverThroughALink) {
  std::string root = dir_ + "/good";
  std::filesystem::create_directories(dir_ + "/outside");
  std::filesystem::create_symlink(dir_ + "/outside", root + "/var");  // an absolute link out of the root
  EXPECT_TRUE(MakeFoldersInRoot(root, "/home/ann/project"));
  EXPECT_TRUE(std::filesystem::is_directory(root + "/home/ann/project"));
  EXPECT_FALSE(MakeFoldersInRoot(root, "/var/lib/shoal/jobs"));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/outside/lib")) << "nothing made outside the root";
  EXPECT_FALSE(MakeFoldersInRoot(root, "/usr/bin/dash/x")) << "a file is not a folder";
  EXPECT_EQ(DeepestFolderInRoot(root, "/home/ann/project/jobs/job-1"), "/home/ann/project");
  EXPECT_EQ(DeepestFolderInRoot(root, "/var/lib"), "/") << "a link is not followed";
  EXPECT_EQ(DeepestFolderInRoot(root, "/usr/bin/dash"), "/usr/bin");
}

}  // namespace
}  // namespace shoal
