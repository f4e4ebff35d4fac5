#include "train/managed_checkpoint.h"

#include <gtest/gtest.h>
#include <signal.h>

namespace shoal::train {
namespace {

TEST(StopOnSignals, TheFirstSignalAsksForTheStopAndNamesIt) {
  EXPECT_FALSE(StopRequested());
  EXPECT_EQ(StopSignalName(), "");
  {
    StopOnSignals guard;
    ASSERT_EQ(raise(SIGINT), 0);  // handled: the process goes on
    EXPECT_TRUE(StopRequested());
    EXPECT_EQ(StopSignal(), SIGINT);
    EXPECT_EQ(StopSignalName(), "SIGINT");
    // A second signal would end the process: the handler is back to the default.
    struct sigaction now {};
    sigaction(SIGINT, nullptr, &now);
    EXPECT_EQ(now.sa_handler, SIG_DFL);
    sigaction(SIGTERM, nullptr, &now);
    EXPECT_NE(now.sa_handler, SIG_DFL);
  }
  struct sigaction after {};
  sigaction(SIGTERM, nullptr, &after);
  EXPECT_EQ(after.sa_handler, SIG_DFL);  // outside training a signal ends the process
}

}  // namespace
}  // namespace shoal::train
