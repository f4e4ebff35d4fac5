#include "storage/local_names.h"

#include <gtest/gtest.h>

#include "storage/mem/mem_storage.h"

namespace shoal::storage {
namespace {

std::vector<ObjectInfo> Objects(const std::vector<std::string>& uris) {
  std::vector<ObjectInfo> out;
  for (const std::string& uri : uris) out.push_back({uri, 1, 0});
  return out;
}

TEST(LocalNamesTest, KeepsFoldersAndNamesThatMerelyHoldDots) {
  EXPECT_EQ(LocalName("s3://b/in/a/x.csv", "s3://b/in/").value(), "a/x.csv");
  EXPECT_EQ(LocalName("s3://b/in/v1..txt", "s3://b/in/").value(), "v1..txt");
  EXPECT_EQ(LocalName("s3://b/in/x..y/...", "s3://b/in/").value(), "x..y/...");
  EXPECT_EQ(LocalName("/data/in/.hidden", "/data/in/").value(), ".hidden");
  EXPECT_TRUE(CheckLocalNames(Objects({"s3://b/in/a/v1..txt", "s3://b/in/b/v1..txt", "s3://b/in/a0"}), "s3://b/in/").ok())
      << "two files of one name in two folders stay two files";
}

TEST(LocalNamesTest, RefusesNamesThatWouldLandElsewhereOrNowhere) {
  for (const std::string& uri : std::vector<std::string>{"s3://b/in/a/../../etc/x", "s3://b/in/..", "s3://b/in/a/./x", "s3://b/in/a//x",
                                 "s3://b/in/a/", "s3://b/in/", "s3://b/other/x", "s3://b/in/" + std::string(256, 'n')}) {
    Result<std::string> name = LocalName(uri, "s3://b/in/");
    ASSERT_FALSE(name.ok()) << uri << " became " << name.value();
    EXPECT_EQ(name.status().code(), StatusCode::kInvalidArgument) << uri;
    EXPECT_NE(name.status().message().find(uri), std::string::npos) << name.status().message();
    EXPECT_NE(name.status().message().find("rename the object"), std::string::npos) << name.status().message();
  }
  EXPECT_TRUE(LocalName("s3://b/in/" + std::string(255, 'n'), "s3://b/in/").ok());
}

TEST(LocalNamesTest, RefusesAFileWhereAnotherNeedsAFolderAndCountsTheRest) {
  Status clash = CheckLocalNames(Objects({"s3://b/in/a", "s3://b/in/a-b", "s3://b/in/a/x"}), "s3://b/in/");
  ASSERT_FALSE(clash.ok());
  EXPECT_NE(clash.message().find("s3://b/in/a would be a file where s3://b/in/a/x needs a folder"), std::string::npos)
      << clash.message();
  EXPECT_TRUE(CheckLocalNames(Objects({"s3://b/in/a", "s3://b/in/a-b", "s3://b/in/ab/x"}), "s3://b/in/").ok());
  Status many = CheckLocalNames(Objects({"s3://b/in/..", "s3://b/in/x/../y", "s3://b/in/ok"}), "s3://b/in/");
  ASSERT_FALSE(many.ok());
  EXPECT_NE(many.message().find("(and 1 more"), std::string::npos) << many.message();
}

TEST(LocalNamesTest, ExpandLeavesFolderMarkersOut) {
  MemStorage& mem = MemStorage::Shared();
  mem.CreateBucket("markers");
  ASSERT_TRUE(mem.PutString("mem://markers/in/", "").ok());
  ASSERT_TRUE(mem.PutString("mem://markers/in/sub/", "").ok());
  ASSERT_TRUE(mem.PutString("mem://markers/in/sub/x", "abc").ok());
  Result<std::vector<ObjectInfo>> listed = ExpandUri("mem://markers/in");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ(listed->front().uri, "mem://markers/in/sub/x");
  ASSERT_TRUE(mem.PutString("mem://markers/empty/", "").ok());
  EXPECT_EQ(ExpandUri("mem://markers/empty/").status().code(), StatusCode::kNotFound)
      << "a folder holding only its marker holds no input";
}

}  // namespace
}  // namespace shoal::storage
