#include "master/stack_requests.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

TEST(StackRequests, EachAskedTaskAnswersOnceAndOnlyTheNewestRequestCounts) {
  StackRequests requests;
  EXPECT_FALSE(requests.PendingFor(0));
  int64_t first = requests.Begin({0, 1});
  EXPECT_EQ(requests.PendingFor(0), first);
  EXPECT_FALSE(requests.PendingFor(2)) << "rank 2 was not asked";
  requests.Answer(0, first, "stack of 0");
  EXPECT_FALSE(requests.PendingFor(0));
  EXPECT_FALSE(requests.Complete(first));

  int64_t second = requests.Begin({0, 1});
  EXPECT_NE(first, second);
  EXPECT_EQ(requests.PendingFor(0), second) << "a new request asks again";
  requests.Answer(1, first, "late answer to the old request");
  EXPECT_TRUE(requests.Answers().empty());
  requests.Answer(0, second, "a");
  requests.Answer(1, second, "b");
  EXPECT_TRUE(requests.Complete(second));
  EXPECT_FALSE(requests.Complete(first));
  EXPECT_EQ(requests.Answers().at(1), "b");
}

}  // namespace
}  // namespace shoal
