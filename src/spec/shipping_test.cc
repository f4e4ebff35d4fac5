#include "spec/shipping.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "testing/scratch_directory.h"

namespace shoal {
namespace {

TEST(Shipping, ArchiveMembersThatLeaveTheirFolderAreCaught) {
  EXPECT_TRUE(EscapesFolder("../evil.py"));
  EXPECT_TRUE(EscapesFolder("lib/../../etc/cron.d/x"));
  EXPECT_TRUE(EscapesFolder("/etc/passwd"));
  EXPECT_TRUE(EscapesFolder(".."));
  EXPECT_FALSE(EscapesFolder("lib/module.py"));
  EXPECT_FALSE(EscapesFolder("lib/..hidden/x"));
  EXPECT_FALSE(EscapesFolder("./lib/x"));
  EXPECT_FALSE(EscapesFolder("a..b"));
}

}  // namespace
}  // namespace shoal

namespace shoal {
namespace {

TEST(Shipping, TarListingsGiveEveryMembersKindAndPath) {
  auto members = ParseTarListing(
      "drwxr-xr-x 0/0               0 2026-12-02 10:27 d/\n"
      "-rw-r--r-- 0/0               0 2026-12-02 10:27 d/sp ace -> x\n"
      "lrwxrwxrwx 0/0               0 2026-12-02 10:27 d/sym -> /etc/passwd\n"
      "hrw-r--r-- 0/0               0 2026-12-02 10:27 d/a link to d/hard\n"
      "crw-r--r-- 0/0             1,3 2026-12-02 10:27 d/null\n"
      "tar: A lone zero block at 12\n");
  ASSERT_TRUE(members.ok()) << members.status().ToString();
  ASSERT_EQ(members->size(), 5u);
  EXPECT_EQ((*members)[1].path, "d/sp ace -> x");
  EXPECT_EQ((*members)[1].kind, '-');
  EXPECT_EQ((*members)[2].kind, 'l');
  EXPECT_EQ((*members)[3].kind, 'h');
  EXPECT_EQ((*members)[4].path, "d/null");
  EXPECT_EQ((*members)[4].kind, 'c');
  EXPECT_FALSE(ParseTarListing("garbage that is no member\n").ok()) << "a line it cannot explain refuses the archive";
}

TEST(Shipping, ZipListingsMustAccountForEveryMember) {
  std::string listing =
      "Archive:  t.zip\n"
      "Zip file size: 1088 bytes, number of entries: 3\n"
      "-rw-r--r--  3.0 unx        0 bx stor 26-Dec-02 10:27 d/sp ace\n"
      "lrwxrwxrwx  3.0 unx       11 bx stor 26-Dec-02 10:27 d/sym\n"
      "?rw-------  2.0 unx       17 b- defN 80-Jan-01 00:00 lib/x.py\n"
      "3 files, 11 bytes uncompressed, 11 bytes compressed:  0.0%\n";
  auto members = ParseZipListing(listing);
  ASSERT_TRUE(members.ok()) << members.status().ToString();
  ASSERT_EQ(members->size(), 3u);
  EXPECT_EQ((*members)[0].path, "d/sp ace");
  EXPECT_EQ((*members)[1].kind, 'l');
  EXPECT_EQ((*members)[2].kind, '-') << "a mode without a file type is unpacked as a file";
  std::string short_one = listing;
  short_one.replace(short_one.find("entries: 3"), 10, "entries: 4");
  EXPECT_FALSE(ParseZipListing(short_one).ok());
}

TEST(Shipping, OnlyFilesAndFoldersInsideTheFolderMayBeUnpacked) {
  EXPECT_EQ(UnsafeMembers({{"lib/", 'd'}, {"lib/x.py", '-'}}), "");
  EXPECT_EQ(UnsafeMembers({{"lib/x.py", '-'}, {"lib/x -> /etc/passwd", 'l'}}), "holds the symbolic link 'lib/x -> /etc/passwd'");
  EXPECT_EQ(UnsafeMembers({{"a link to b", 'h'}}), "holds the hard link 'a link to b'");
  EXPECT_EQ(UnsafeMembers({{"null", 'c'}}), "holds the character device 'null'");
  EXPECT_EQ(UnsafeMembers({{"sda", 'b'}}), "holds the block device 'sda'");
  EXPECT_EQ(UnsafeMembers({{"pipe", 'p'}}), "holds the FIFO 'pipe'");
  EXPECT_EQ(UnsafeMembers({{"../x", '-'}}), "holds '../x', which would unpack outside the task's folder");
}

// Real archives, listed by the real tools: each kind of member is refused by name.
TEST(Shipping, ArchivesHoldingLinksDevicesOrFifosAreRefusedNamingTheMember) {
  testing_support::ScratchDirectory scratch("shipping");
  const std::string& dir = scratch.path();
  std::string setup = "mkdir -p " + dir + "/src/d && cd " + dir + "/src && echo hi > d/a"
                      " && ln -s /etc/passwd d/sym && ln d/a d/hard && mkfifo d/fifo"
                      " && tar -cf ../sym.tar d/a d/sym && tar -cf ../hard.tar d/a d/hard && tar -cf ../fifo.tar d/fifo"
                      " && tar -czf ../ok.tar.gz d/a && zip -qy ../sym.zip d/a d/sym";
  ASSERT_EQ(std::system(setup.c_str()), 0);
  struct Case {
    const char* archive;
    const char* expected;  // "" for accepted
  } cases[] = {{"sym.tar", "holds the symbolic link 'd/sym -> /etc/passwd'"},
               {"hard.tar", "holds the hard link 'd/hard link to d/a'"},
               {"fifo.tar", "holds the FIFO 'd/fifo'"},
               {"sym.zip", "holds the symbolic link 'd/sym'"},
               {"ok.tar.gz", ""}};
  for (const auto& c : cases) {
    JobSpec spec;
    spec.archives.push_back({dir + "/" + c.archive, "lib", {}});
    auto issues = CheckShippedFiles(spec);
    if (*c.expected == '\0') {
      EXPECT_TRUE(issues.empty()) << c.archive << ": " << issues[0].problem;
      continue;
    }
    ASSERT_EQ(issues.size(), 1u) << c.archive;
    EXPECT_EQ(issues[0].field, "archives[0].path");
    EXPECT_NE(issues[0].problem.find(c.expected), std::string::npos) << issues[0].problem;
  }
}

}  // namespace
}  // namespace shoal
