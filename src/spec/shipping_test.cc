#include "spec/shipping.h"

#include <gtest/gtest.h>

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
