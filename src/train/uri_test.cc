#include "train/uri.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "testing/scratch_directory.h"

namespace shoal::train {
namespace {

TEST(Uri, FileUrisAreAbsolutePathsOnThisMachine) {
  for (const char* uri : {"file:/data/out/m.model", "file:///data/out/m.model", "file://localhost/data/out/m.model"}) {
    EXPECT_TRUE(IsLocal(uri)) << uri;
    EXPECT_TRUE(CheckUri(uri, "-model").ok()) << uri;
    EXPECT_EQ(LocalPath(uri), "/data/out/m.model") << uri;
  }
  EXPECT_EQ(LocalPath("out/m.model"), "out/m.model");
  EXPECT_EQ(PlainUri("file:///data/m.model"), "/data/m.model");
  EXPECT_EQ(PlainUri("s3://b/m.model"), "s3://b/m.model");
  EXPECT_EQ(UriJoin(UriDir("file:/data/out/m.model"), "m_iter_5.caffemodel"), "file:/data/out/m_iter_5.caffemodel");
  EXPECT_EQ(UriJoin("/ckpt", "file:/data/m.caffemodel"), "file:/data/m.caffemodel");
}

TEST(Uri, RelativeFileUrisAndOtherHostsAreRefusedWithTheFix) {
  auto relative = CheckUri("file:out/m.model", "-model");
  ASSERT_FALSE(relative.ok());
  EXPECT_EQ(relative.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(relative.message().find("-model: file:out/m.model is not an absolute file URI: write file:/absolute/path"),
            std::string::npos)
      << relative.message();
  auto host = CheckUri("file://nas1/data/m.model", "-weights");
  ASSERT_FALSE(host.ok());
  EXPECT_NE(host.message().find("names a file on host 'nas1'"), std::string::npos) << host.message();
  EXPECT_FALSE(CheckUri("file://nas1", "-output").ok());
  EXPECT_FALSE(ReadFileBytes("file:relative.prototxt").ok());
}

TEST(Uri, WritesGoToThePathOfAFileUri) {
  testing_support::ScratchDirectory scratch("uri");
  std::filesystem::path dir = scratch / "not-made-yet";
  std::string uri = "file:" + (dir / "out" / "m.model").string();
  ASSERT_TRUE(WriteFileAtomic(uri, "weights").ok());
  EXPECT_TRUE(std::filesystem::exists(dir / "out" / "m.model"));
  EXPECT_EQ(*ReadFileBytes("file://" + (dir / "out" / "m.model").string()), "weights");
}

}  // namespace
}  // namespace shoal::train
