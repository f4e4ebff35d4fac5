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
  // Its vote, and another worker's signal adopted only when this one had none.
  EXPECT_EQ(SignalOfVotes(StopVote()), SIGINT);
  AdoptStopSignal(SIGTERM);
  EXPECT_EQ(StopSignal(), SIGINT);
}

TEST(StopVotes, ASumNamesSigtermWhenAnyWorkerGotItElseSigint) {
  EXPECT_EQ(SignalOfVotes(0), 0);
  EXPECT_EQ(SignalOfVotes(1), SIGINT);
  EXPECT_EQ(SignalOfVotes(7), SIGINT);
  EXPECT_EQ(SignalOfVotes(1024), SIGTERM);
  EXPECT_EQ(SignalOfVotes(1024 + 3), SIGTERM);
  EXPECT_EQ(SignalOfVotes(16383.0f * 1024), SIGTERM);
  // The trainer reads the sum averaged over the replicas and scales it back.
  const float averaged = 1024.0f * (1.0f / 3.0f);
  EXPECT_EQ(SignalOfVotes(averaged * 3.0f), SIGTERM);
  EXPECT_EQ(SignalOfVotes((1.0f / 7.0f) * 7.0f), SIGINT);
}

}  // namespace
}  // namespace shoal::train
