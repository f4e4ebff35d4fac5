#include "master/task_tokens.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

TEST(TaskTokens, EachTaskHasItsOwnAndNoneOpensAnother) {
  auto tokens = TaskTokens::Make(2);
  ASSERT_TRUE(tokens.ok()) << tokens.status().ToString();
  EXPECT_EQ(tokens->ForTask(0).size(), 64u);
  EXPECT_NE(tokens->ForTask(0), tokens->ForTask(1));
  EXPECT_NE(tokens->ForTask(0), tokens->ForMpi());
  EXPECT_TRUE(tokens->AllowsTask(0, "Bearer " + tokens->ForTask(0)));
  EXPECT_FALSE(tokens->AllowsTask(1, "Bearer " + tokens->ForTask(0))) << "worker[0] cannot pose as worker[1]";
  EXPECT_FALSE(tokens->AllowsTask(0, ""));
  EXPECT_FALSE(tokens->AllowsTask(0, tokens->ForTask(0))) << "only as a bearer token";
  EXPECT_FALSE(tokens->AllowsTask(2, "Bearer " + tokens->ForTask(0))) << "no such rank";
  EXPECT_FALSE(tokens->AllowsTask(-1, ""));
  EXPECT_TRUE(tokens->AllowsMpi("Bearer " + tokens->ForMpi()));
  EXPECT_FALSE(tokens->AllowsMpi("Bearer " + tokens->ForTask(0)));
  auto other_attempt = TaskTokens::Make(2);
  EXPECT_FALSE(other_attempt->AllowsTask(0, "Bearer " + tokens->ForTask(0))) << "attempts do not share secrets";
}

}  // namespace
}  // namespace shoal
