#include "scheduling/queue_config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "testing/scratch_directory.h"

namespace shoal {
namespace {

TEST(QueueConfig, ReadsQueuesAndGivesDefaultWhatIsLeft) {
  auto config = ParseQueueConfig(
      "max_wait: 30m\n"
      "queues:\n"
      "  research: {guarantee: 40%, max: 80%, user_limit: {cpus: 8, memory: 32G, gpus: 2}}\n"
      "  prod:\n"
      "    guarantee: 50%\n",
      "queues.yaml");
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->max_wait_ms, 30 * 60 * 1000);
  ASSERT_EQ(config->queues.size(), 3u);
  const QueueSpec* research = config->FindQueue("research");
  ASSERT_NE(research, nullptr);
  EXPECT_DOUBLE_EQ(research->guarantee, 0.4);
  EXPECT_DOUBLE_EQ(research->max, 0.8);
  EXPECT_EQ(research->user_limit.cpus, 8);
  EXPECT_EQ(research->user_limit.memory_bytes, 32LL << 30);
  EXPECT_EQ(research->user_limit.gpus, 2);
  EXPECT_DOUBLE_EQ(config->FindQueue("prod")->max, 1);
  EXPECT_NEAR(config->FindQueue("default")->guarantee, 0.1, 1e-9);
  auto empty = ParseQueueConfig("", "queues.yaml");
  ASSERT_TRUE(empty.ok());
  ASSERT_EQ(empty->queues.size(), 1u);
  EXPECT_EQ(empty->queues[0].name, "default");
}

TEST(QueueConfig, AttainedServiceIsOnByDefaultAndTheBoundsAreRead) {
  const SchedulingConfig defaults = DefaultSchedulingConfig();
  EXPECT_EQ(defaults.service_levels, (std::vector<double>{0.1 * 3.6e6, 0.5 * 3.6e6, 2 * 3.6e6, 8 * 3.6e6, 32 * 3.6e6}));
  EXPECT_EQ(defaults.max_wait_ms, 3600 * 1000);
  EXPECT_EQ(defaults.max_wait_to_resume_ms, 72LL * 3600 * 1000);
  auto config = ParseQueueConfig("service_levels: []\nmax_wait_to_resume: 12h\n", "queues.yaml");
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_TRUE(config->service_levels.empty()) << "[] turns them off";
  EXPECT_EQ(config->max_wait_to_resume_ms, 12LL * 3600 * 1000);
  auto bad = ParseQueueConfig("max_wait_to_resume: 0s\n", "queues.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "queues.yaml:1: max_wait_to_resume must be a duration above zero; e.g. max_wait_to_resume: 72h");
}

TEST(QueueConfig, ReadsPreemptLowerPriorityTrueOrFalseAndDefaultsToFalse) {
  auto config = ParseQueueConfig(
      "queues:\n"
      "  research: {guarantee: 40%, preempt_lower_priority: true}\n"
      "  prod:\n"
      "    preempt_lower_priority: false\n"
      "  batch: {guarantee: 10%}\n",
      "queues.yaml");
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_TRUE(config->FindQueue("research")->preempt_lower_priority);
  EXPECT_FALSE(config->FindQueue("prod")->preempt_lower_priority);
  EXPECT_FALSE(config->FindQueue("batch")->preempt_lower_priority);
  EXPECT_FALSE(config->FindQueue("default")->preempt_lower_priority);
  EXPECT_FALSE(DefaultSchedulingConfig().FindQueue("default")->preempt_lower_priority);
}

TEST(QueueConfig, ReadsEachQueuesSlurmPartitionAndQosAndTheLongestGrace) {
  auto config = ParseQueueConfig(
      "max_preemption_grace: 2m\n"
      "service_levels: [0.5, 2]\n"
      "min_run_before_preemption: 5m\n"
      "queues:\n"
      "  research: {guarantee: 40%, slurm: {partition: gpu, qos: high}}\n"
      "  batch: {slurm: {partition: cpu}}\n",
      "queues.yaml");
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->max_preemption_grace_ms, 120'000);
  EXPECT_EQ(config->service_levels, (std::vector<double>{0.5 * 3.6e6, 2 * 3.6e6})) << "GPU-hours, kept as GPU-ms";
  EXPECT_EQ(config->min_run_before_preemption_ms, 300'000);
  EXPECT_EQ(config->FindQueue("research")->slurm_partition, "gpu");
  EXPECT_EQ(config->FindQueue("research")->slurm_qos, "high");
  EXPECT_EQ(config->FindQueue("batch")->slurm_qos, "");
  EXPECT_EQ(config->FindQueue("default")->slurm_partition, "") << "the server's own";
  EXPECT_EQ(DefaultSchedulingConfig().max_preemption_grace_ms, 600'000);
}

TEST(QueueConfig, RefusesEachProblemWithItsLineAndFix) {
  struct Case {
    std::string text, expected;
  } cases[] = {
      {"queues:\n  a: {guarantee: 60%}\n  b: {guarantee: 50%}\n", "queues.yaml:1: the queues' guarantees sum to 110%, past 100%"},
      {"queues:\n  a: {guarantee: 60%, max: 50%}\n", "queues.yaml:2: queues.a.max is below its guarantee"},
      {"queues:\n  a: {guarantee: 0.4}\n", "queues.yaml:2: queues.a.guarantee must be a share of the cluster from 0% to 100% (got `0.4`); e.g. 40%"},
      {"queues:\n  a: {guarantee: 140%}\n", "must be a share of the cluster from 0% to 100% (got `140%`)"},
      {"queues:\n  A!: {guarantee: 10%}\n", "queues.yaml:2: queue name `A!` is not 1 to 32"},
      {"queues:\n  a: {guarantee: 10%, share: 3}\n", "queues.yaml:2: queues.a has an unknown field `share`"},
      {"queues:\n  a: {user_limit: {cpus: -1}}\n", "queues.a.user_limit.cpus must be a number above zero"},
      {"queues:\n  a: {user_limit: {gpus: 1.5}}\n", "queues.a.user_limit.gpus must be a whole number above zero"},
      {"queues:\n  a: {user_limit: {memory: lots}}\n", "queues.a.user_limit.memory: "},
      {"max_wait: never\n", "queues.yaml:1: max_wait must be a duration above zero; e.g. max_wait: 1h"},
      {"queue: {}\n", "queues.yaml:1: has an unknown field `queue`; the fields are max_wait, max_wait_to_resume, max_preemption_grace, service_levels, min_run_before_preemption and queues"},
      {"service_levels: [2, 1]\n", "queues.yaml:1: service_levels must be ascending numbers of GPU-hours above zero (got `1`)"},
      {"queues:\n  a:\n    slurm: {partition: 'g p u'}\n", "queues.yaml:3: queues.a.slurm.partition must be a Slurm name"},
      {"queues:\n  a:\n    slurm: {account: ml}\n", "queues.yaml:3: queues.a.slurm has an unknown field `account`"},
      {"max_preemption_grace: soon\n", "queues.yaml:1: max_preemption_grace must be a duration"},
      {"queues: [a, b]\n", "queues must map each queue's name to its settings"},
      {"queues: {a: {max: 0%}}\n", "queues.a.max is 0%"},
      {"queues:\n  a:\n    guarantee: 10%\n    preempt_lower_priority: yes\n",
       "queues.yaml:4: queues.a.preempt_lower_priority must be true or false (got `yes`); e.g. preempt_lower_priority: true"},
      {"queues:\n  a: {preempt_lower_priority: [true]}\n",
       "queues.yaml:2: queues.a.preempt_lower_priority must be true or false (got ``)"},
      {"queues:\n  a: {preempt_lower_priorities: true}\n",
       "queues.a has an unknown field `preempt_lower_priorities`; the fields are guarantee, max, user_limit, "
       "preempt_lower_priority and slurm"},
      {"queues: {a: [\n", "queues.yaml:2: is not YAML"},
      {"- 1\n", "must be a mapping with max_wait and queues"},
  };
  for (const auto& c : cases) {
    auto config = ParseQueueConfig(c.text, "queues.yaml");
    ASSERT_FALSE(config.ok()) << c.text;
    EXPECT_NE(config.status().message().find(c.expected), std::string::npos) << config.status().message();
  }
}

TEST(QueueConfigFile, ReloadsWhenTheFileChangesAndKeepsTheLastGoodOne) {
  testing_support::ScratchDirectory dir("queue-config");
  std::string path = dir / "queues.yaml";  // none yet
  QueueConfigFile file(path);
  ASSERT_TRUE(file.Load().ok());
  EXPECT_EQ(file.config().queues.size(), 1u);
  std::ofstream(path) << "queues: {research: {guarantee: 40%}}\n";
  EXPECT_TRUE(file.Refresh());
  EXPECT_NE(file.config().FindQueue("research"), nullptr);
  EXPECT_FALSE(file.Refresh());  // unchanged
  std::ofstream(path) << "queues: {research: {guarantee: 400%}}\n";
  EXPECT_FALSE(file.Refresh());
  EXPECT_NE(file.config().FindQueue("research"), nullptr);
  EXPECT_NE(file.error().find("400%"), std::string::npos);
  std::filesystem::remove(path);
  EXPECT_TRUE(file.Refresh());
  EXPECT_EQ(file.config().FindQueue("research"), nullptr);
  EXPECT_EQ(file.error(), "");
}

}  // namespace
}  // namespace shoal
