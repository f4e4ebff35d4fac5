#include "scheduling/queue_credit.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

constexpr int64_t kHour = 3600 * 1000;

// Two queues of half an 8-CPU cluster each.
SchedulingConfig TwoHalves() {
  SchedulingConfig config;
  config.queues = {QueueSpec{"default", 0, 1, {}}, QueueSpec{"big", 0.5, 1, {}}, QueueSpec{"small", 0.5, 1, {}}};
  return config;
}

// At `now`: `running` and `waiting` CPUs per job, all in queue `queue`.
ScheduleInput At(const SchedulingConfig& config, int64_t now, const std::string& queue, std::vector<double> running,
                 std::vector<double> waiting) {
  ScheduleInput input;
  input.config = &config;
  input.cluster.capacity = Resources{8, 0, 0};
  input.now_ms = now;
  for (double cpus : running) input.running.push_back(RunningJob{.queue = queue, .total = Resources{cpus, 0, 0}});
  for (double cpus : waiting) input.pending.push_back(PendingJob{.queue = queue, .tasks = {Resources{cpus, 0, 0}}});
  return input;
}

double CreditOf(const QueueCredit& credit, const std::string& queue) {
  auto found = credit.credit().find(queue);
  return found == credit.credit().end() ? 0 : found->second;
}

TEST(QueueCredit, AQueueHeldBelowItsGuaranteeByTheSizeOfItsJobsGainsWhatItIsShortAndPaysItBackBeyond) {
  SchedulingConfig config = TwoHalves();
  QueueCredit credit;
  // big holds 3 of its 4 CPUs; its only waiting job needs 2: short by 1/8 of the cluster.
  credit.Advance(At(config, 0, "big", {3}, {2}));
  EXPECT_TRUE(credit.credit().empty());  // the first call only sets the clock
  credit.Advance(At(config, kHour, "big", {3, 2}, {1}));
  EXPECT_DOUBLE_EQ(CreditOf(credit, "big"), 0.125 * kHour);
  // Now 5 of 4, with work still waiting that would not fit: it pays back 1/8 per ms.
  credit.Advance(At(config, 3 * kHour, "big", {3}, {1}));
  EXPECT_DOUBLE_EQ(CreditOf(credit, "big"), -0.125 * kHour);
  // 3 of 4 with a waiting job that fits within: the guarantee starts it; credit stays.
  credit.Advance(At(config, 5 * kHour, "big", {3}, {}));
  EXPECT_DOUBLE_EQ(CreditOf(credit, "big"), -0.125 * kHour);
  // Nothing waiting: the debt stays.
  credit.Advance(At(config, 9 * kHour, "big", {}, {}));
  EXPECT_DOUBLE_EQ(CreditOf(credit, "big"), -0.125 * kHour);
  EXPECT_EQ(CreditOf(credit, "small"), 0);
}

TEST(QueueCredit, CreditEndsWhenNothingWaitsAndWhenTheQueueIsNoLongerConfigured) {
  SchedulingConfig config = TwoHalves();
  QueueCredit credit;
  credit.Advance(At(config, 0, "small", {}, {8}));  // guaranteed 4, its job needs 8
  credit.Advance(At(config, kHour, "small", {}, {}));
  EXPECT_DOUBLE_EQ(CreditOf(credit, "small"), 0.5 * kHour);
  credit.Advance(At(config, 2 * kHour, "small", {}, {}));
  EXPECT_EQ(CreditOf(credit, "small"), 0);  // it was kept from nothing for the last hour

  // Beyond its guarantee with nothing waiting, it spends its credit, down to zero and no
  // further.
  credit.Advance(At(config, 3 * kHour, "small", {}, {8}));
  credit.Advance(At(config, 4 * kHour, "small", {6}, {}));  // 0.5 h of credit; now 6 of 4
  EXPECT_DOUBLE_EQ(CreditOf(credit, "small"), 0.5 * kHour);
  credit.Advance(At(config, 5 * kHour, "small", {6}, {}));
  EXPECT_DOUBLE_EQ(CreditOf(credit, "small"), 0.25 * kHour);
  credit.Advance(At(config, 8 * kHour, "small", {}, {8}));
  EXPECT_EQ(CreditOf(credit, "small"), 0);

  SchedulingConfig without_small = config;
  without_small.queues.pop_back();
  credit.Advance(At(without_small, 4 * kHour, "small", {}, {8}));
  EXPECT_TRUE(credit.credit().empty());
}

TEST(QueueCredit, AQueueWithoutAGuaranteeHasNone) {
  SchedulingConfig config = TwoHalves();
  QueueCredit credit;
  credit.Advance(At(config, 0, "default", {}, {8}));
  credit.Advance(At(config, kHour, "default", {}, {8}));
  EXPECT_TRUE(credit.credit().empty());
}

}  // namespace
}  // namespace shoal
