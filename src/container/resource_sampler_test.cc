#include "container/resource_sampler.h"

#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "common/process.h"
#include "isolation/fake_root.h"

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

TEST_F(FakeRoot, ACgroupSamplerReadsTheWholeTaskFromItsGroup) {
  CgroupGroup group{1, {{"memory", root_ + "/memory/t"}, {"cpuacct", root_ + "/cpuacct/t"}}};
  Write("/memory/t/memory.usage_in_bytes", "3000000\n");
  Write("/memory/t/memory.stat", "total_inactive_file 1000000\n");
  Write("/memory/t/memory.max_usage_in_bytes", "9000000\n");
  Write("/cpuacct/t/cpuacct.usage", "0\n");
  FakeClock clock;
  CgroupSampler sampler(clock, "", group);
  ProcessUsage first = sampler.Sample({});
  EXPECT_EQ(first.cpu_percent, 0) << "no rate before a second sample";
  EXPECT_EQ(first.rss_bytes, 2000000) << "without the page cache the kernel can reclaim";
  EXPECT_EQ(first.rss_peak_bytes, 9000000);
  EXPECT_FALSE(first.gpu_util_percent) << "no GPUs";
  clock.Advance(1000);
  Write("/cpuacct/t/cpuacct.usage", "500000000\n");  // half a second of CPU in one second
  EXPECT_DOUBLE_EQ(sampler.Sample({}).cpu_percent, 50);
}

}  // namespace
}  // namespace shoal
