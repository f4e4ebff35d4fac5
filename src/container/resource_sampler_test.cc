#include "container/resource_sampler.h"

#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "common/process.h"

namespace shoal {
namespace {

TEST(ProcfsSampler, MeasuresAProgramAndWhatItStarted) {
  // The busy loop leaves the program's process group, as `timeout` and `setsid` do.
  auto env = CurrentEnvironment();
  env["SHOAL_SAMPLER_TEST"] = std::to_string(getpid());
  auto pid = RealProcessLauncher::Instance().Spawn(
      {.argv = {"/bin/sh", "-c", "setsid sh -c 'while :; do :; done' & wait"}, .env = env, .new_session = true});
  ASSERT_TRUE(pid.ok());
  usleep(100'000);
  SystemClock& clock = SystemClock::Instance();
  ProcfsSampler sampler(clock, "");
  ProcessUsage first = sampler.Sample({*pid});
  EXPECT_EQ(first.cpu_percent, 0) << "no rate before a second sample";
  EXPECT_GT(first.rss_bytes, 0);
  usleep(500'000);
  ProcessUsage second = sampler.Sample({*pid});
  KillProcessesWithEnvironment({"SHOAL_SAMPLER_TEST=" + std::to_string(getpid())});
  RealProcessLauncher::Instance().Wait(*pid);
  EXPECT_GT(second.cpu_percent, 5) << "the loop burns CPU";
  EXPECT_LT(second.cpu_percent, 250);
  EXPECT_FALSE(second.gpu_util_percent) << "no GPUs were given";
  EXPECT_EQ(ProcfsSampler(clock, "").Sample({9'999'999}).rss_bytes, 0) << "an empty group uses nothing";
}

}  // namespace
}  // namespace shoal
