#include "backend/admission.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

QueuedJob Job(const std::string& id, int tasks, double cpus, int gpus = 0) {
  return {id, std::vector<Resources>(tasks, Resources{cpus, 1LL << 30, gpus})};
}

FreeCapacity Free(double cpus, int gpus = 0) {
  FreeCapacity free{{cpus, 16LL << 30, gpus}, {}};
  for (int i = 0; i < gpus; ++i) free.free_gpus.insert(i);
  return free;
}

std::vector<std::string> Ids(const std::vector<Admission>& admitted) {
  std::vector<std::string> ids;
  for (const auto& a : admitted) ids.push_back(a.job_id);
  return ids;
}

TEST(AdmitFifo, AdmitsWholeJobsInOrderAndStopsAtTheFirstThatDoesNotFit) {
  struct Case {
    std::vector<QueuedJob> queue;
    double cpus;
    std::vector<std::string> expected;
  } cases[] = {
      {{Job("a", 2, 1), Job("b", 2, 1)}, 4, {"a", "b"}},
      {{Job("a", 2, 1), Job("b", 2, 1)}, 3, {"a"}},
      {{Job("a", 4, 1), Job("b", 1, 1)}, 2, {}},              // strict FIFO: b waits behind a
      {{Job("a", 1, 0.5), Job("b", 3, 0.5)}, 2, {"a", "b"}},  // fractional CPUs add up
      {{}, 2, {}},
  };
  for (const auto& c : cases) EXPECT_EQ(Ids(AdmitFifo(c.queue, Free(c.cpus))), c.expected);
}

TEST(AdmitFifo, AssignsDistinctGpus) {
  auto admitted = AdmitFifo({Job("a", 2, 1, 1), Job("b", 1, 1, 2), Job("c", 1, 1, 1)}, Free(8, 4));
  ASSERT_EQ(Ids(admitted), (std::vector<std::string>{"a", "b"})) << "c waits: all four GPUs are taken";
  EXPECT_EQ(admitted[0].task_gpus, (std::vector<std::vector<int>>{{0}, {1}}));
  EXPECT_EQ(admitted[1].task_gpus, (std::vector<std::vector<int>>{{2, 3}}));
  EXPECT_TRUE(AdmitFifo({Job("d", 1, 1, 5)}, Free(8, 4)).empty());
}

}  // namespace
}  // namespace shoal
