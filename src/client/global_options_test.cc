#include "client/global_options.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

using Args = std::vector<std::string>;

TEST(GlobalOptions, HomeIsTakenWhereverItStands) {
  auto before = SplitGlobalOptions({"shoal", "--home", "/h", "server", "--port", "0"});
  EXPECT_EQ(before.home, "/h");
  EXPECT_EQ(before.rest, (Args{"shoal", "server", "--port", "0"}));
  auto after = SplitGlobalOptions({"shoal", "list", "--home=/h2", "--json"});
  EXPECT_EQ(after.home, "/h2");
  EXPECT_EQ(after.rest, (Args{"shoal", "list", "--json"}));
  EXPECT_EQ(SplitGlobalOptions({"shoal", "--home", "/a", "list", "--home", "/b"}).home, "/b") << "the last one wins";
}

TEST(GlobalOptions, OthersAreLeftAsTheyAre) {
  EXPECT_FALSE(SplitGlobalOptions({"shoal", "list"}).home.has_value());
  auto dangling = SplitGlobalOptions({"shoal", "list", "--home"});
  EXPECT_FALSE(dangling.home.has_value());
  EXPECT_EQ(dangling.rest, (Args{"shoal", "list", "--home"})) << "the command's parser refuses it";
  auto after_dashes = SplitGlobalOptions({"shoal", "run", "job.yaml", "--", "--home", "/x"});
  EXPECT_FALSE(after_dashes.home.has_value());
  EXPECT_EQ(after_dashes.rest.size(), 6u);
}

}  // namespace
}  // namespace shoal
