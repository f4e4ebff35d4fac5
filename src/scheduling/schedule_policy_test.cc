#include "scheduling/schedule_policy.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "scheduling/resource_profile.h"

namespace shoal {
namespace {

constexpr int64_t kMinute = 60 * 1000;
constexpr int64_t kHour = 60 * kMinute;
constexpr int64_t kNow = 1000 * kHour;  // any fixed wall time

Resources Cpus(double cpus, int gpus = 0) { return Resources{cpus, 1LL << 30, gpus}; }

PendingJob Job(const std::string& id, double cpus, int64_t submitted_ago = 0, int64_t estimate = 0) {
  PendingJob job;
  job.id = id;
  job.tasks = {Cpus(cpus)};
  job.submitted_ms = kNow - submitted_ago;
  job.estimate_ms = estimate;
  return job;
}

PendingJob In(PendingJob job, const std::string& queue, const std::string& user, int priority = 0) {
  job.queue = queue;
  job.user = user;
  job.priority = priority;
  return job;
}

RunningJob Running(const std::string& id, double cpus, int64_t ends_in = 0, const std::string& queue = "default",
                   const std::string& user = "") {
  RunningJob job;
  job.id = id;
  job.queue = queue;
  job.user = user;
  job.total = Cpus(cpus);
  job.started_ms = kNow - kMinute;
  job.estimate_ms = ends_in > 0 ? ends_in + kMinute : 0;
  return job;
}

// `job`, started `started_ago` before now, at `priority`.
RunningJob Started(RunningJob job, int64_t started_ago, int priority = 0) {
  job.started_ms = kNow - started_ago;
  job.priority = priority;
  return job;
}

// `job`, whose checkpoints Shoal keeps (a `checkpoint:`).
template <typename JobT>
JobT Checkpointed(JobT job) {
  job.checkpointed = true;
  return job;
}

SchedulingConfig Config(OrderPolicy order = OrderPolicy::kFairShare, bool backfill = true) {
  SchedulingConfig config;
  config.queues = {QueueSpec{"default", 1, 1, {}}};
  config.order = order;
  config.backfill = backfill;
  return config;
}

// A cluster of `cpus` CPUs (64G, `gpus` GPUs) with `running` on it.
ScheduleInput Cluster(const SchedulingConfig& config, double cpus, std::vector<PendingJob> pending,
                      std::vector<RunningJob> running = {}, int gpus = 0) {
  ScheduleInput input;
  input.config = &config;
  input.cluster.capacity = Resources{cpus, 64LL << 30, gpus};
  input.cluster.free = input.cluster.capacity;
  for (int i = 0; i < gpus; ++i) input.cluster.free_gpus.insert(i);
  for (const RunningJob& job : running) input.cluster.free -= job.total;
  input.pending = std::move(pending);
  input.running = std::move(running);
  input.now_ms = kNow;
  return input;
}

std::vector<std::string> Admitted(const ScheduleDecision& decision) {
  std::vector<std::string> ids;
  for (const auto& a : decision.admit) ids.push_back(a.job_id);
  return ids;
}

std::vector<std::string> Preempted(const ScheduleDecision& decision) {
  std::vector<std::string> ids;
  for (const Preemption& p : decision.preempt) ids.push_back(p.job_id);
  return ids;
}

TEST(ResourceProfile, FindsTheEarliestStartAndHonoursReservations) {
  ResourceProfile profile(0, Cpus(2), {{10, Cpus(2)}, {20, Cpus(4)}});  // 2 free, 4 at 10, 8 at 20
  EXPECT_TRUE(profile.FitsFrom(0, Cpus(2), 0));
  EXPECT_EQ(profile.EarliestStart(Cpus(4), 0), 10);
  EXPECT_EQ(profile.EarliestStart(Cpus(8), 5), 20);
  EXPECT_FALSE(profile.EarliestStart(Cpus(9), 0).has_value());
  profile.Reserve(10, Cpus(4), 0);  // holds 4 from 10 on, for ever
  EXPECT_TRUE(profile.FitsFrom(0, Cpus(2), 10));   // ends as the reservation starts
  EXPECT_FALSE(profile.FitsFrom(0, Cpus(2), 11));  // would overlap it
  EXPECT_EQ(profile.EarliestStart(Cpus(4), 0), 20);
  profile.ReserveWhatIsLeftAtTheEnd(Cpus(9));  // only 4 are left there
  EXPECT_FALSE(profile.FitsFrom(20, Cpus(0.5), 0));
  EXPECT_TRUE(profile.FitsFrom(0, Cpus(2), 10));
}

TEST(SchedulePolicy, StrictFifoStopsAtTheFirstJobThatDoesNotFit) {
  SchedulingConfig config = Config(OrderPolicy::kFifo, false);
  struct Case {
    std::vector<PendingJob> pending;
    double cpus;
    std::vector<std::string> expected;
  } cases[] = {
      {{Job("a", 2, 2), Job("b", 2, 1)}, 4, {"a", "b"}},
      {{Job("a", 2, 2), Job("b", 2, 1)}, 3, {"a"}},
      {{Job("a", 4, 2), Job("b", 1, 1)}, 2, {}},           // b waits behind a
      {{Job("b", 1, 1), Job("a", 4, 2)}, 2, {}},           // submission time orders, not the list
      {{Job("a", 0.5, 2), Job("b", 1.5, 1)}, 2, {"a", "b"}},  // fractional CPUs add up
      {{}, 2, {}},
  };
  for (const auto& c : cases) EXPECT_EQ(Admitted(Schedule(Cluster(config, c.cpus, c.pending))), c.expected);
  ScheduleDecision decision = Schedule(Cluster(config, 2, {Job("a", 4, 2), Job("b", 1, 1)}));
  EXPECT_EQ(decision.waiting["b"], "behind a (jobs start in submission order)");
}

TEST(SchedulePolicy, AssignsDistinctGpusLowestFirst) {
  SchedulingConfig config = Config();
  PendingJob a = Job("a", 1, 3), b = Job("b", 1, 2), c = Job("c", 1, 1);
  a.tasks = {Cpus(1, 1), Cpus(1, 1)};
  b.tasks = {Cpus(1, 2)};
  c.tasks = {Cpus(1, 1)};
  ScheduleDecision decision = Schedule(Cluster(config, 8, {a, b, c}, {}, 4));
  ASSERT_EQ(Admitted(decision), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(decision.admit[0].task_gpus, (std::vector<std::vector<int>>{{0}, {1}}));
  EXPECT_EQ(decision.admit[1].task_gpus, (std::vector<std::vector<int>>{{2, 3}}));
  EXPECT_EQ(decision.waiting["c"].substr(0, 26), "needs 1 GPU (none free); s");
}

TEST(SchedulePolicy, BackfillsOnlyWhatDelaysNoReservation) {
  SchedulingConfig config = Config();
  // 8 CPUs; r holds 6 for one more hour. head needs 4: reserved to start in an hour.
  std::vector<RunningJob> running = {Running("r", 6, kHour)};
  struct Case {
    PendingJob later;
    bool starts;
  } cases[] = {
      {Job("short", 2, 1, 30 * kMinute), true},   // ends before the head starts
      {Job("long", 2, 1, 2 * kHour), true},       // at 1h: 8 free - 4 head - 2 long = 2: fits beside it
      {Job("unknown", 2, 1, 0), true},            // likewise, for ever
      {Job("big", 2.5, 1, 0), false},             // would leave the head 3.5 at 1h
      {Job("big-short", 2.5, 1, 59 * kMinute), false},  // does not fit now anyway
  };
  for (const auto& c : cases) {
    ScheduleDecision decision = Schedule(Cluster(config, 8, {Job("head", 4, 2, kHour), c.later}, running));
    EXPECT_EQ(Admitted(decision).size(), c.starts ? 1u : 0u) << c.later.id;
    EXPECT_EQ(decision.reserved_start_ms["head"], kNow + kHour) << c.later.id;
  }
  // With a running job of no estimate, the head's start is unknown: a later job without
  // an estimate may take only what the head can never need.
  running = {Running("r", 6)};
  ScheduleDecision decision = Schedule(Cluster(config, 8, {Job("head", 4, 2), Job("later", 1, 1)}, running));
  EXPECT_TRUE(decision.admit.empty());
  EXPECT_EQ(decision.waiting["later"],
            "fits now, but would delay head, which is reserved to start first (this job has no estimate: set "
            "`estimate:` or timeouts.job so it can start in the gap); starts when running jobs end (they have no "
            "estimates); 2nd in queue default, behind head; queue default uses 6 of its guaranteed 8 CPUs");
  EXPECT_EQ(decision.waiting["head"],
            "needs 4 CPUs (2 free); starts when running jobs end (they have no estimates); first in queue default; "
            "queue default uses 6 of its guaranteed 8 CPUs");
}

TEST(SchedulePolicy, WithinAQueuePriorityThenTheUserWithTheSmallerShareThenAge) {
  SchedulingConfig config = Config();
  // 4 CPUs free of 8; ann already runs 4. Each case: which one of the two 4-CPU jobs starts.
  std::vector<RunningJob> running = {Running("r", 4, 0, "default", "ann")};
  struct Case {
    PendingJob first, second;
    std::string expected;
  } cases[] = {
      {In(Job("old", 4, 2), "default", "bob"), In(Job("new", 4, 1), "default", "bob"), "old"},
      {In(Job("low", 4, 2), "default", "bob", -1), In(Job("high", 4, 1), "default", "bob", 5), "high"},
      {In(Job("ann-old", 4, 2), "default", "ann"), In(Job("bob-new", 4, 1), "default", "bob"), "bob-new"},
      {In(Job("ann-high", 4, 2), "default", "ann", 1), In(Job("bob", 4, 1), "default", "bob"), "ann-high"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(Admitted(Schedule(Cluster(config, 8, {c.first, c.second}, running))),
              std::vector<std::string>{c.expected});
  }
}

TEST(SchedulePolicy, TheQueueThatWouldBeFurthestBelowItsGuaranteeGoesFirst) {
  SchedulingConfig config = Config();
  config.queues = {QueueSpec{"default", 0, 1, {}}, QueueSpec{"research", 0.25, 1, {}}, QueueSpec{"prod", 0.75, 1, {}}};
  std::vector<RunningJob> running = {Running("p", 4, 0, "prod"), Running("r", 1, 0, "research")};
  // With its job started, research would use 2 of its 2 (ratio 1), prod 7 of its 6
  // (1.17): research goes first, although prod's job is older; default has no guarantee
  // and comes last.
  ScheduleDecision decision = Schedule(Cluster(
      config, 8, {In(Job("d", 3, 3), "default", "x"), In(Job("p2", 3, 2), "prod", "x"), In(Job("r2", 1, 1), "research", "x")},
      running));
  EXPECT_EQ(Admitted(decision), std::vector<std::string>{"r2"});
  EXPECT_EQ(decision.waiting["p2"],
            "needs 3 CPUs (2 free); it would take its queue beyond its guarantee, so it reserves nothing and jobs "
            "behind it may start first; first in queue prod; queue prod uses 4 of its guaranteed 6 CPUs");
  // A job that would take research far past its guarantee goes after prod's.
  decision = Schedule(Cluster(config, 8, {In(Job("p2", 2, 2), "prod", "x"), In(Job("r3", 3, 1), "research", "x")}, running));
  EXPECT_EQ(Admitted(decision), std::vector<std::string>{"p2"});
}

TEST(SchedulePolicy, QueueMaxStopsTheQueueAndUserLimitSkipsOnlyThatUser) {
  SchedulingConfig config = Config();
  config.queues = {QueueSpec{"default", 0.5, 1, {}}, QueueSpec{"small", 0.25, 0.375, Resources{2, 0, 0}}};
  std::vector<RunningJob> running = {Running("r", 2, 0, "small", "ann")};
  ScheduleDecision decision = Schedule(Cluster(
      config, 8,
      {In(Job("ann-more", 1, 3), "small", "ann", 1), In(Job("bob-one", 1, 2), "small", "bob"),
       In(Job("bob-two", 1, 1), "small", "bob")},
      running));
  EXPECT_EQ(Admitted(decision), std::vector<std::string>{"bob-one"});
  EXPECT_EQ(decision.waiting["ann-more"], "ann uses 2 of the 2 CPUs queue small allows each user, and this job needs 1");
  EXPECT_EQ(decision.waiting["bob-two"],
            "queue small may use at most 3 CPUs (its max, 37.5% of the cluster) and uses 3; this job needs 1");
}

TEST(SchedulePolicy, AJobThatWaitedPastMaxWaitGoesBeforeHigherPriorities) {
  SchedulingConfig config = Config();
  config.max_wait_ms = kHour;
  ScheduleDecision decision = Schedule(Cluster(
      config, 4, {In(Job("old-low", 4, 2 * kHour), "default", "a", -100), In(Job("new-high", 4, 1), "default", "b", 100)}));
  EXPECT_EQ(Admitted(decision), std::vector<std::string>{"old-low"});
  EXPECT_EQ(decision.waiting["new-high"].substr(0, 20), "needs 4 CPUs (none f");
}

TEST(SchedulePolicy, AQueueBelowItsGuaranteeTakesBackWhatItLentYoungestLowestFirst) {
  SchedulingConfig config = Config();
  config.queues = {QueueSpec{"default", 0, 1, {}}, QueueSpec{"research", 0.5, 1, {}}, QueueSpec{"batch", 0.5, 1, {}}};
  // batch borrows: it runs 8 of 8 CPUs; research, guaranteed 4, wants 3.
  auto batch_job = [](const std::string& id, double cpus, int64_t started_ago, int priority = 0) {
    return Started(Running(id, cpus, 0, "batch", "bob"), started_ago, priority);
  };
  std::vector<RunningJob> running = {batch_job("old", 2, 3 * kHour), batch_job("young", 2, kHour),
                                     batch_job("important", 2, 10 * kMinute, 5), batch_job("newest", 2, kMinute)};
  ScheduleDecision decision = Schedule(Cluster(config, 8, {In(Job("r", 3, 1), "research", "ann")}, running));
  EXPECT_TRUE(decision.admit.empty());
  std::vector<std::string> victims;
  for (const Preemption& p : decision.preempt) victims.push_back(p.job_id);
  EXPECT_EQ(victims, (std::vector<std::string>{"newest", "young"})) << "priority 0 before 5, the youngest first, 2 are enough";
  ASSERT_FALSE(decision.preempt.empty());
  EXPECT_EQ(decision.preempt[0].for_job, "r");
  EXPECT_EQ(decision.waiting["r"].substr(0, 30), "preempting newest, young (borr");

  // Jobs already on their way out count: nothing more is chosen.
  running[3].preempting = running[1].preempting = true;
  EXPECT_TRUE(Schedule(Cluster(config, 8, {In(Job("r", 3, 1), "research", "ann")}, running)).preempt.empty());

  // Not beyond the guarantee: research may take back 4 CPUs, not 6.
  running[3].preempting = running[1].preempting = false;
  EXPECT_TRUE(Schedule(Cluster(config, 8, {In(Job("r", 6, 1), "research", "ann")}, running)).preempt.empty());
  // Not from a queue within its own guarantee.
  std::vector<RunningJob> fair = {batch_job("b", 4, kHour), Running("r1", 4, 0, "research", "ann")};
  EXPECT_TRUE(Schedule(Cluster(config, 8, {In(Job("r2", 1, 1), "research", "ann")}, fair)).preempt.empty());
  // And never when preemption is off.
  config.preemption = false;
  EXPECT_TRUE(Schedule(Cluster(config, 8, {In(Job("r", 3, 1), "research", "ann")}, running)).preempt.empty());
}

// A job larger than what its queue's guarantee has left still takes back, from queues
// that stay at least as far above their guarantees as it takes its own, so the queues it
// takes from cannot take back in turn (a queue guaranteed 2.7 GPUs with 1-GPU jobs would
// otherwise never get its third).
TEST(SchedulePolicy, AJobBeyondItsQueuesGuaranteeTakesBackOnlyFromQueuesThatStayFurtherAbove) {
  SchedulingConfig config = Config();
  auto one_cpu_jobs = [](const std::string& queue, int count) {
    std::vector<RunningJob> jobs;
    for (int i = 0; i < count; ++i) {
      jobs.push_back(Started(Running(queue + std::to_string(i), 1, 0, queue, "bob"), (i + 1) * kMinute));
    }
    return jobs;
  };
  // research (guaranteed 2 of 8 CPUs) runs 1 and wants 2 more: 1.5x its guarantee.
  // batch, guaranteed 2, runs the other 7 (3.5x); without 2 of them it is still at 2.5x.
  config.queues = {QueueSpec{"default", 0, 1, {}}, QueueSpec{"research", 0.25, 1, {}}, QueueSpec{"batch", 0.25, 1, {}}};
  std::vector<RunningJob> running = one_cpu_jobs("batch", 7);
  running.push_back(Running("research-running", 1, 0, "research", "ann"));
  ScheduleDecision decision = Schedule(Cluster(config, 8, {In(Job("r", 2, 1), "research", "ann")}, running));
  EXPECT_EQ(Preempted(decision), (std::vector<std::string>{"batch0", "batch1"})) << "the youngest two";

  // batch guaranteed 4: without 2 jobs it would be at 1.25x, nearer its guarantee than
  // research would be beyond its own (1.5x); nothing is taken.
  config.queues[2].guarantee = 0.5;
  EXPECT_TRUE(Schedule(Cluster(config, 8, {In(Job("r", 2, 1), "research", "ann")}, running)).preempt.empty());

  // research already at its guarantee: it takes nothing for a job beyond it.
  running = one_cpu_jobs("batch", 6);
  for (RunningJob& job : one_cpu_jobs("research", 2)) running.push_back(job);
  config.queues[2].guarantee = 0.25;
  EXPECT_TRUE(Schedule(Cluster(config, 8, {In(Job("r", 1, 1), "research", "ann")}, running)).preempt.empty());
}

// A queue guaranteed less than one of its jobs may run one job at a time (up to twice its
// guarantee, rounded up to one CPU here): it takes lent capacity back for it, goes first in
// the queues' turns, and keeps it while it is its only job.
TEST(SchedulePolicy, EveryQueueMayRunOneJobUpToTwiceItsGuarantee) {
  SchedulingConfig config = Config();
  config.queues = {QueueSpec{"default", 0.2, 1, {}}, QueueSpec{"tiny", 0.1, 1, {}}, QueueSpec{"batch", 0.7, 1, {}}};
  auto batch_jobs = [](int count) {
    std::vector<RunningJob> jobs;
    for (int i = 0; i < count; ++i) {
      jobs.push_back(Started(Running("batch" + std::to_string(i), 1, 0, "batch", "bob"), (i + 1) * kMinute));
    }
    return jobs;
  };
  // 10 CPUs: tiny is guaranteed 1, batch 7 and runs all 10.
  ScheduleDecision decision = Schedule(Cluster(config, 10, {In(Job("t", 2, 1), "tiny", "ann")}, batch_jobs(10)));
  EXPECT_EQ(Preempted(decision), (std::vector<std::string>{"batch0", "batch1"})) << "2 CPUs: twice its guarantee";
  EXPECT_TRUE(Schedule(Cluster(config, 10, {In(Job("t", 3, 1), "tiny", "ann")}, batch_jobs(10))).preempt.empty())
      << "3 CPUs are more than twice its guarantee";

  // Its one job stays for a job beyond batch's guarantee (batch runs 5 of its 7 and
  // wants 3)...
  std::vector<RunningJob> running = batch_jobs(5);
  running.push_back(Running("default-job", 2, 0, "default", "dan"));
  running.push_back(Running("tiny-one", 2, 0, "tiny", "ann"));
  EXPECT_TRUE(Schedule(Cluster(config, 10, {In(Job("b", 3, 1), "batch", "bob")}, running)).preempt.empty());
  // ...not for one within it (batch wants 2):
  EXPECT_EQ(Preempted(Schedule(Cluster(config, 10, {In(Job("b", 2, 1), "batch", "bob")}, running))),
            std::vector<std::string>{"tiny-one"});
  // and two jobs of tiny are borrowing like any other's.
  running.back().total = Cpus(1);
  running.push_back(Started(Running("tiny-two", 1, 0, "tiny", "ann"), 30 * 1000));
  EXPECT_EQ(Preempted(Schedule(Cluster(config, 10, {In(Job("b", 2, 1), "batch", "bob")}, running))),
            std::vector<std::string>{"tiny-two"})
      << "the youngest";

  // Turns: with 3 CPUs free, tiny's job (holding nothing) goes before batch's that would
  // borrow, after batch's that stays within batch's guarantee (which could take it back).
  running = batch_jobs(6);
  running.push_back(Running("default-job", 1, 0, "default", "dan"));
  decision = Schedule(Cluster(config, 10, {In(Job("b", 2, 2), "batch", "bob"), In(Job("t", 2, 1), "tiny", "ann")}, running));
  EXPECT_EQ(Admitted(decision), std::vector<std::string>{"t"}) << "batch's would take batch to 8 of its 7";
  running = batch_jobs(5);
  running.push_back(Running("default-job", 2, 0, "default", "dan"));
  decision = Schedule(Cluster(config, 10, {In(Job("b", 2, 2), "batch", "bob"), In(Job("t", 2, 1), "tiny", "ann")}, running));
  EXPECT_EQ(Admitted(decision), std::vector<std::string>{"b"}) << "batch's keeps batch within its 7";

  // Two queues guaranteed half each: research took back batch's one job; when both wait
  // again, research's job, which fills its guarantee exactly, goes first (else they would
  // take it from each other for ever).
  config.queues = {QueueSpec{"default", 0, 1, {}}, QueueSpec{"research", 0.5, 1, {}}, QueueSpec{"batch", 0.5, 1, {}}};
  EXPECT_EQ(Preempted(Schedule(Cluster(config, 4, {In(Job("owner", 2, 1), "research", "ann")},
                                       {Running("borrower", 4, 0, "batch", "bob")}))),
            std::vector<std::string>{"borrower"});
  decision = Schedule(Cluster(config, 4, {In(Job("borrower", 4, 2), "batch", "bob"), In(Job("owner", 2, 1), "research", "ann")}));
  EXPECT_EQ(Admitted(decision), std::vector<std::string>{"owner"});
}

// A job of a queue already at its guarantee borrows and reserves nothing: a smaller job
// behind it starts in what is free.
TEST(SchedulePolicy, ABorrowingJobReservesNothingAndHoldsBackNoJobBehindIt) {
  SchedulingConfig config = Config();
  config.queues = {QueueSpec{"default", 0, 1, {}}, QueueSpec{"a", 0.5, 1, {}}, QueueSpec{"b", 0.5, 1, {}}};
  // 8 CPUs: a runs its 4, b runs 2; 2 are free. a's big job (4 more) is older than its small one.
  std::vector<RunningJob> running = {Running("a-running", 4, 0, "a", "ann"), Running("b-running", 2, 0, "b", "bob")};
  ScheduleDecision decision = Schedule(Cluster(
      config, 8, {In(Job("big", 4, 2 * kMinute), "a", "ann"), In(Job("small", 1, kMinute), "a", "ann")}, running));
  EXPECT_EQ(Admitted(decision), std::vector<std::string>{"small"});
  EXPECT_EQ(decision.reserved_start_ms.count("big"), 0u);
  EXPECT_NE(decision.waiting["big"].find("it would take its queue beyond its guarantee, so it reserves nothing"),
            std::string::npos)
      << decision.waiting["big"];
  // Below its guarantee too, when the job would take it beyond (4 + 4 of a guaranteed 6).
  config.queues[1].guarantee = 0.75;
  config.queues[2].guarantee = 0.25;
  decision = Schedule(Cluster(
      config, 8, {In(Job("big", 4, 2 * kMinute), "a", "ann"), In(Job("small", 1, kMinute), "a", "ann")}, running));
  EXPECT_EQ(Admitted(decision), std::vector<std::string>{"small"});
  EXPECT_EQ(decision.reserved_start_ms.count("big"), 0u);
  // A job that keeps its queue within its guarantee reserves, and the small job waits behind it.
  decision = Schedule(Cluster(
      config, 8, {In(Job("big", 2, 2 * kMinute), "a", "ann"), In(Job("small", 1, kMinute), "a", "ann")},
      {Running("a-running", 4, 0, "a", "ann"), Running("b-running", 3, 0, "b", "bob")}));
  EXPECT_TRUE(decision.admit.empty());
}

// One queue, research, with the whole cluster; its running jobs, by priority and age.
std::vector<RunningJob> ResearchRunning() {
  auto research_job = [](const std::string& id, int64_t started_ago, int priority) {
    return Started(Running(id, 2, 0, "research", "bob"), started_ago, priority);
  };
  return {research_job("low-old", 3 * kHour, 0), research_job("low-young", kHour, 0),
          research_job("mid", 10 * kMinute, 50), research_job("high", kMinute, 100)};
}

TEST(SchedulePolicy, AQueueThatAllowsItPreemptsItsLowerPrioritiesYoungestLowestFirst) {
  SchedulingConfig config = Config();
  config.queues = {QueueSpec{"default", 0, 1, {}}, QueueSpec{"research", 1, 1, {}, true}};
  struct Case {
    std::string name;
    double cluster_cpus;  // research's jobs hold 8
    double head_cpus;
    int head_priority;
    std::vector<std::string> already_preempting;
    std::vector<std::string> expected;
  } cases[] = {
      {"the youngest of the lowest", 8, 2, 100, {}, {"low-young"}},
      {"then the older of the lowest", 8, 4, 100, {}, {"low-young", "low-old"}},
      {"then the next priority up", 8, 6, 100, {}, {"low-young", "low-old", "mid"}},
      {"what is free counts", 9, 3, 100, {}, {"low-young"}},
      {"never an equal priority: all lower ones free 6 of 8", 8, 8, 100, {}, {}},
      {"never an equal or higher priority", 8, 6, 50, {}, {}},
      {"only strictly lower ones", 8, 4, 50, {}, {"low-young", "low-old"}},
      {"nothing lower at all", 8, 2, 0, {}, {}},
      {"what is on its way back is enough", 8, 2, 100, {"low-young"}, {}},
      {"a job being preempted is not chosen again", 8, 4, 100, {"low-young"}, {"low-old"}},
      {"and its room counts", 8, 6, 100, {"low-young"}, {"low-old", "mid"}},
  };
  for (const auto& c : cases) {
    std::vector<RunningJob> running = ResearchRunning();
    for (RunningJob& job : running) {
      job.preempting = std::ranges::find(c.already_preempting, job.id) != c.already_preempting.end();
    }
    ScheduleDecision decision =
        Schedule(Cluster(config, c.cluster_cpus, {In(Job("job-7", c.head_cpus, 1), "research", "ann", c.head_priority)}, running));
    EXPECT_TRUE(decision.admit.empty()) << c.name;
    EXPECT_EQ(Preempted(decision), c.expected) << c.name;
  }

  // Each preemption says for which job and why; the job's reason says what makes room.
  ScheduleDecision decision = Schedule(Cluster(
      config, 8, {In(Job("job-7", 2, 2), "research", "ann", 100), In(Job("job-8", 2, 1), "research", "ann", 90)},
      ResearchRunning()));
  ASSERT_EQ(Preempted(decision), std::vector<std::string>{"low-young"}) << "only the queue's first job preempts";
  EXPECT_EQ(decision.preempt[0].for_job, "job-7");
  EXPECT_EQ(decision.preempt[0].reason,
            "for job-7 (priority 100) in queue research, which allows preempting lower priorities");
  EXPECT_EQ(decision.waiting["job-7"].rfind("preempting low-young (lower priorities in queue research) to make room; ", 0), 0u)
      << decision.waiting["job-7"];
}

TEST(SchedulePolicy, AQueueThatDoesNotAllowItNeverPreemptsItsOwnJobs) {
  SchedulingConfig config = Config();
  config.queues = {QueueSpec{"default", 0, 1, {}}, QueueSpec{"research", 1, 1, {}}};
  PendingJob head = In(Job("job-7", 2, 1), "research", "ann", 100);
  EXPECT_TRUE(Schedule(Cluster(config, 8, {head}, ResearchRunning())).preempt.empty()) << "not allowed by the queue";
  config.queues[1].preempt_lower_priority = true;
  config.preemption = false;
  EXPECT_TRUE(Schedule(Cluster(config, 8, {head}, ResearchRunning())).preempt.empty()) << "preemption off";
  config.preemption = true;
  config.order = OrderPolicy::kFifo;
  EXPECT_TRUE(Schedule(Cluster(config, 8, {head}, ResearchRunning())).preempt.empty()) << "FIFO";
}

TEST(SchedulePolicy, AJobHeldBackByItsQueuesMaxOrItsUserLimitPreemptsLowerPrioritiesUnderThatLimit) {
  // research may use 4 of the 8 CPUs, 3 per user; ann's jobs hold 3 of them, bob's 1.
  SchedulingConfig config = Config();
  config.queues = {QueueSpec{"default", 0.5, 1, {}}, QueueSpec{"research", 0.5, 0.5, Resources{3, 0, 0}, true}};
  auto research_job = [](const std::string& id, const std::string& user, double cpus, int64_t started_ago, int priority) {
    return Started(Running(id, cpus, 0, "research", user), started_ago, priority);
  };
  const std::vector<RunningJob> running = {research_job("ann-low-old", "ann", 1, 3 * kHour, 0),
                                           research_job("ann-low-young", "ann", 1, kHour, 0),
                                           research_job("ann-high", "ann", 1, kHour, 100),
                                           research_job("bob-low", "bob", 1, kMinute, 0)};
  struct Case {
    std::string name;
    PendingJob head;
    std::vector<std::string> already_preempting;
    std::vector<std::string> expected;
  } cases[] = {
      // bob: 1 + 2 is within his 3, but research would use 4 + 2 of its 4 (room is free).
      {"the max: the youngest of the lowest first", In(Job("job-7", 2, 1), "research", "bob", 100), {},
       {"bob-low", "ann-low-young"}},
      {"the max: only as many as bring it within", In(Job("job-7", 1, 1), "research", "bob", 100), {}, {"bob-low"}},
      {"the max: a job on its way out counts", In(Job("job-7", 1, 1), "research", "bob", 100), {"bob-low"}, {}},
      {"the max: never an equal priority", In(Job("job-7", 1, 1), "research", "bob", 0), {}, {}},
      {"the max: nothing when all lower ones would not bring it within", In(Job("job-7", 4, 1), "research", "bob", 100),
       {}, {}},
      // ann: 3 + 1 is beyond her 3: only her own lower priorities count against it.
      {"the user limit: only the user's own", In(Job("job-7", 1, 1), "research", "ann", 100), {}, {"ann-low-young"}},
      {"the user limit: and the max", In(Job("job-7", 2, 1), "research", "ann", 100), {},
       {"ann-low-young", "ann-low-old"}},
      {"the user limit: not when the user's lower ones would not do", In(Job("job-7", 3, 1), "research", "ann", 100),
       {}, {}},
  };
  for (const auto& c : cases) {
    std::vector<RunningJob> jobs = running;
    for (RunningJob& job : jobs) {
      job.preempting = std::ranges::find(c.already_preempting, job.id) != c.already_preempting.end();
    }
    ScheduleDecision decision = Schedule(Cluster(config, 8, {c.head}, jobs));
    EXPECT_TRUE(decision.admit.empty()) << c.name;
    EXPECT_EQ(Preempted(decision), c.expected) << c.name;
  }

  // Only the first job the limit holds back preempts; its reason says what makes room.
  ScheduleDecision decision = Schedule(Cluster(
      config, 8, {In(Job("job-7", 1, 2), "research", "bob", 100), In(Job("job-8", 1, 1), "research", "bob", 90)},
      running));
  EXPECT_EQ(Preempted(decision), std::vector<std::string>{"bob-low"});
  EXPECT_EQ(decision.waiting["job-7"].rfind("preempting bob-low (lower priorities in queue research) to make room; queue "
                                            "research may use at most 4 CPUs",
                                            0),
            0u)
      << decision.waiting["job-7"];

  // A queue that does not allow it keeps its jobs.
  config.queues[1].preempt_lower_priority = false;
  EXPECT_TRUE(Schedule(Cluster(config, 8, {In(Job("job-7", 1, 1), "research", "bob", 100)}, running)).preempt.empty());
}

TEST(SchedulePolicy, PreemptionByPriorityComesAfterTakingBackWhatWasLent) {
  SchedulingConfig config = Config();
  config.queues = {QueueSpec{"default", 0, 1, {}}, QueueSpec{"research", 0.5, 1, {}, true},
                   QueueSpec{"batch", 0.5, 1, {}}};
  auto job = [](const std::string& id, const std::string& queue, int64_t started_ago) {
    return Started(Running(id, 2, 0, queue, "bob"), started_ago);
  };
  PendingJob head = In(Job("job-7", 2, 1), "research", "ann", 100);
  // research uses 2 of its 4, batch borrows 2: research takes its own back from batch.
  ScheduleDecision decision = Schedule(Cluster(
      config, 8, {head}, {job("r1", "research", kMinute), job("b1", "batch", 3 * kHour), job("b2", "batch", 2 * kHour),
                          job("b3", "batch", kHour)}));
  EXPECT_EQ(Preempted(decision), std::vector<std::string>{"b3"});
  // research uses its 4 and batch its 4: research's own lower priority gives way.
  decision = Schedule(Cluster(config, 8, {head},
                              {job("r1", "research", 2 * kHour), job("r2", "research", kMinute), job("b1", "batch", kHour),
                               job("b2", "batch", kMinute)}));
  EXPECT_EQ(Preempted(decision), std::vector<std::string>{"r2"});
}

// Service levels at 1 and 4 CPU-hours; a running job of `cpus` that has run `ran`.
SchedulingConfig ServiceLevels() {
  SchedulingConfig config = Config();
  config.service_levels = {1.0 * kHour, 4.0 * kHour};
  config.min_run_before_preemption_ms = 10 * kMinute;
  return config;
}

RunningJob Served(const std::string& id, double cpus, int64_t ran, bool checkpointed = true) {
  RunningJob job = Started(Running(id, cpus), ran);
  job.checkpointed = checkpointed;
  return job;
}

TEST(SchedulePolicy, WithServiceLevelsTheLeastServedGoFirstAndPreemptTheMostServed) {
  const SchedulingConfig config = ServiceLevels();
  // Order: a job back from a preemption with 2 CPU-hours waits behind a fresh one.
  PendingJob served = Job("served", 2, 30 * kMinute);
  served.attained = 2.0 * kHour * 1;
  PendingJob fresh = Job("fresh", 2, kMinute);
  EXPECT_EQ(Admitted(Schedule(Cluster(config, 2, {served, fresh}))), std::vector<std::string>{"fresh"});
  struct Case {
    const char* name;
    std::vector<RunningJob> running;
    std::vector<std::string> preempted;
  };
  std::vector<Case> cases = {
      // 2 CPUs x 3 h = 6 CPU-hours: level 2; 2 CPUs x 40 min: level 1; the highest goes first.
      {"highest level first", {Served("r-low", 2, 40 * kMinute), Served("r-high", 2, 3 * kHour)}, {"r-high"}},
      {"not below the head's level", {Served("r-new", 2, 20 * kMinute), Served("r-new2", 2, 25 * kMinute)}, {}},
      {"not before min_run", {Started(Running("r-short", 2), 5 * kMinute)}, {}},
      {"not without checkpoints", {Served("r-bare", 2, 3 * kHour, false)}, {}},
      {"only as many as needed, the most served first", {Served("a", 2, 3 * kHour), Served("b", 2, 4 * kHour)}, {"b"}},
  };
  for (const Case& c : cases) {
    std::vector<RunningJob> running = c.running;
    // The cluster is full: 2 CPUs more than the running jobs hold would be free otherwise.
    double cpus = 0;
    for (const RunningJob& r : running) cpus += r.total.cpus;
    EXPECT_EQ(Preempted(Schedule(Cluster(config, cpus, {fresh}, running))), c.preempted) << c.name;
  }
  RunningJob aged = Served("aged", 2, 3 * kHour);
  aged.aged = true;
  EXPECT_TRUE(Schedule(Cluster(config, 2, {fresh}, {aged})).preempt.empty()) << "a job resumed for having aged stays";
  SchedulingConfig without_levels = Config();
  without_levels.service_levels.clear();
  EXPECT_TRUE(Schedule(Cluster(without_levels, 2, {fresh}, {Served("r", 2, 3 * kHour)})).preempt.empty())
      << "without service levels nothing is preempted for service";
  EXPECT_EQ(Preempted(Schedule(Cluster(Config(), 2, {fresh}, {Served("r", 2, 3 * kHour)}))), std::vector<std::string>{"r"})
      << "service levels are on by default";
}

// The two starvation bounds: max_wait from submission for a job that has never run;
// max_wait_to_resume over every wait since its first start for one that has.
TEST(SchedulePolicy, AJobThatHasRunIsBoundByMaxWaitToResumeOverAllItsWaits) {
  SchedulingConfig config = ServiceLevels();
  config.max_wait_ms = kHour;
  config.max_wait_to_resume_ms = 24 * kHour;
  // Submitted 30 h ago, 2 CPU-hours served (level 1): a fresh job of level 0 goes first...
  PendingJob served = Job("served", 2, 30 * kHour);
  served.attained = 2.0 * kHour;
  served.has_run = true;
  served.waited_since_first_run_ms = 23 * kHour;
  PendingJob fresh = Job("fresh", 2, 2 * kHour);  // past max_wait itself, and submitted later
  EXPECT_EQ(Admitted(Schedule(Cluster(config, 2, {served, fresh}))), std::vector<std::string>{"fresh"})
      << "23 h waited since its first start: max_wait from its submission does not lift it";
  // ...until its waits since its first start reach max_wait_to_resume.
  served.waited_since_first_run_ms = 24 * kHour;
  ScheduleDecision decision = Schedule(Cluster(config, 2, {served, fresh}));
  EXPECT_EQ(Admitted(decision), std::vector<std::string>{"served"});
  std::string reason = Schedule(Cluster(config, 2, {served}, {Running("r", 2)})).waiting["served"];
  EXPECT_NE(reason.find("waited longer in all than the server's max_wait_to_resume"), std::string::npos) << reason;
  EXPECT_TRUE(WaitedPastBound(served, config, kNow));
  EXPECT_FALSE(WaitedPastBound(Job("new", 2, 59 * kMinute), config, kNow));
  EXPECT_TRUE(WaitedPastBound(Job("old", 2, kHour), config, kNow));
  // A job that aged past max_wait before its first start is still preempted for service
  // once it has had more than the waiting job: only a resumed one stays.
  RunningJob started_aged = Served("started-aged", 2, 3 * kHour);
  EXPECT_EQ(Preempted(Schedule(Cluster(config, 2, {Job("new", 2)}, {started_aged}))),
            std::vector<std::string>{"started-aged"});
}

TEST(SchedulePolicy, MaxWaitDoesNotLiftAJobThatWouldBorrow) {
  SchedulingConfig config = Config();
  config.max_wait_ms = kHour;
  config.queues = {QueueSpec{"default", 0, 1, {}}, QueueSpec{"research", 0.5, 1, {}}, QueueSpec{"batch", 0.5, 1, {}}};
  // batch holds its 4 of 8; its old job would borrow 3 more, research's new one stays
  // within research's 4: research's goes first although batch's waited past max_wait.
  std::vector<RunningJob> running = {Running("b", 4, 0, "batch", "bob")};
  ScheduleDecision decision = Schedule(Cluster(
      config, 8, {In(Job("old-borrower", 3, 2 * kHour), "batch", "bob"), In(Job("new", 3, 1), "research", "ann")}, running));
  EXPECT_EQ(Admitted(decision), std::vector<std::string>{"new"});
  EXPECT_EQ(decision.waiting["old-borrower"].find("max_wait"), std::string::npos) << decision.waiting["old-borrower"];
}

TEST(SchedulePolicy, AnUnknownQueueWaitsWithTheFix) {
  SchedulingConfig config = Config();
  ScheduleDecision decision = Schedule(Cluster(config, 8, {In(Job("a", 1), "gone", "ann")}));
  EXPECT_TRUE(decision.admit.empty());
  EXPECT_NE(decision.waiting["a"].find("queue gone is not configured"), std::string::npos);
}

TEST(SchedulePolicy, ExplainOffWritesNoReasons) {
  SchedulingConfig config = Config();
  ScheduleInput input = Cluster(config, 1, {Job("a", 2)});
  input.explain = false;
  ScheduleDecision decision = Schedule(input);
  ASSERT_EQ(decision.waiting.count("a"), 1u);
  EXPECT_EQ(decision.waiting["a"], "");
}

// The starvation bound, played out: a stream of high-priority 1-CPU jobs (each 10 min, an
// estimate the policy knows) keeps 4 CPUs busy; a low-priority job needing all 4 must
// still start no later than max_wait plus the longest run already going at that moment.
TEST(SchedulePolicy, NoJobIsPassedOverWithoutBound) {
  SchedulingConfig config = Config();
  config.max_wait_ms = kHour;
  const int64_t kRun = 10 * kMinute;
  PendingJob big = In(Job("big", 4), "default", "a", -100);
  big.submitted_ms = 0;
  std::vector<RunningJob> running;
  int64_t started_big = -1;
  int next_id = 0;
  for (int64_t now = 0; now <= 4 * kHour && started_big < 0; now += kMinute) {
    std::erase_if(running, [&](const RunningJob& job) { return job.started_ms + job.estimate_ms <= now; });
    std::vector<PendingJob> pending = {big};
    for (int i = 0; i < 4; ++i) {  // always more small jobs waiting than fit
      PendingJob small = In(Job("s" + std::to_string(next_id + i), 1), "default", "b", 100);
      small.submitted_ms = now;
      small.estimate_ms = kRun;
      pending.push_back(small);
    }
    ScheduleInput input;
    input.config = &config;
    input.cluster.capacity = Cpus(4);
    input.cluster.capacity.memory_bytes = 64LL << 30;
    input.cluster.free = input.cluster.capacity;
    for (const RunningJob& job : running) input.cluster.free -= job.total;
    input.pending = pending;
    input.running = running;
    input.now_ms = now;
    for (const JobAdmission& admitted : Schedule(input).admit) {
      if (admitted.job_id == "big") {
        started_big = now;
        break;
      }
      RunningJob job;
      job.id = admitted.job_id;
      job.total = admitted.total;
      job.started_ms = now;
      job.estimate_ms = kRun;
      running.push_back(job);
      ++next_id;
    }
  }
  ASSERT_GE(started_big, kHour);  // passed over until then: the small ones have priority
  EXPECT_LE(started_big, kHour + kRun);
}

// Queues a and b, guaranteed half of 8 CPUs each.
SchedulingConfig HalfAndHalf() {
  SchedulingConfig config = Config();
  config.queues = {QueueSpec{"default", 0, 1, {}}, QueueSpec{"a", 0.5, 1, {}}, QueueSpec{"b", 0.5, 1, {}}};
  return config;
}

// a holds 3 of its 4 CPUs and its job needs 2; b borrows (5 of 4); nothing is free.
TEST(SchedulePolicy, AQueueWithCreditTakesBackLentCapacityForAJobBeyondItsGuarantee) {
  SchedulingConfig config = HalfAndHalf();
  auto input = [&](double credit_of_a) {
    ScheduleInput in = Cluster(config, 8, {Checkpointed(In(Job("a-big", 2), "a", "ann"))},
                               {Running("a-1", 3, 0, "a", "ann"), Running("b-1", 3, 0, "b", "bob"),
                                Running("b-2", 2, 0, "b", "bob")});
    if (credit_of_a != 0) in.queue_credit["a"] = credit_of_a;
    return in;
  };
  // Without credit it borrows: it would end as far beyond its guarantee as b is.
  ScheduleDecision decision = Schedule(input(0));
  EXPECT_TRUE(Preempted(decision).empty());
  EXPECT_EQ(decision.waiting["a-big"].find("its queue has credit"), std::string::npos) << decision.waiting["a-big"];
  decision = Schedule(input(-kHour));  // a owes: the same
  EXPECT_TRUE(Preempted(decision).empty());
  // Credit that would not hold the job beyond a's guarantee (1/8 of the cluster) for
  // min_run_before_preemption (10 minutes) is not enough yet.
  decision = Schedule(input(0.12 * 10 * kMinute));
  EXPECT_TRUE(Preempted(decision).empty());
  // With credit it goes as a's one job: b gives back what it borrowed.
  decision = Schedule(input(0.13 * 10 * kMinute));
  ASSERT_EQ(Preempted(decision).size(), 1u);
  EXPECT_EQ(Preempted(decision)[0].substr(0, 2), "b-");
  EXPECT_NE(decision.waiting["a-big"].find("its queue has credit"), std::string::npos) << decision.waiting["a-big"];
  EXPECT_EQ(decision.reserved_start_ms.count("a-big"), 0u);  // it still reserves nothing
}

// a and b hold 3 of their 4 CPUs each; 2 are free. b's job stays within b's guarantee;
// a's would take a beyond its own.
TEST(SchedulePolicy, AJobOnCreditGoesByHowFarBelowItsGuaranteeItsQueueIsNow) {
  SchedulingConfig config = HalfAndHalf();
  auto input = [&](std::map<std::string, double> credit) {
    ScheduleInput in = Cluster(config, 8,
                               {In(Job("b-next", 1, kMinute), "b", "bob"), Checkpointed(In(Job("a-big", 2), "a", "ann"))},
                               {Running("a-1", 3, 0, "a", "ann"), Running("b-1", 3, 0, "b", "bob")});
    in.queue_credit = std::move(credit);
    return in;
  };
  // Without credit, b's job within its guarantee goes first, and a's borrows what is left.
  EXPECT_EQ(Admitted(Schedule(input({}))), std::vector<std::string>{"b-next"});
  // On credit, a (at 3/4 of its guarantee) goes before b's job (which brings b to all of
  // its own), and b's job does not take it back while a has credit: otherwise the room a's
  // credit takes from a queue would go back to that queue's next job at the next pass.
  ScheduleDecision decision = Schedule(input({{"a", kHour}}));
  EXPECT_EQ(Admitted(decision), std::vector<std::string>{"a-big"});
  EXPECT_TRUE(Preempted(decision).empty());
}

// a runs on credit beyond its guarantee (6 of 4); b holds 2 of its 4.
TEST(SchedulePolicy, AQueueWithCreditKeepsItsJobsWhileTheCreditLasts) {
  SchedulingConfig config = HalfAndHalf();
  auto input = [&](double b_needs, std::map<std::string, double> credit) {
    ScheduleInput in = Cluster(config, 8, {Checkpointed(In(Job("b-next", b_needs), "b", "bob"))},
                               {Running("a-1", 3, 0, "a", "ann"), Running("a-2", 3, 0, "a", "ann"),
                                Running("b-1", 2, 0, "b", "bob")});
    in.queue_credit = std::move(credit);
    return in;
  };
  // b's job of 3 would take b beyond its guarantee; b has credit, so it takes back from a...
  EXPECT_EQ(Preempted(Schedule(input(3, {{"b", kHour}}))).size(), 1u);
  // ...unless a has credit too.
  EXPECT_TRUE(Preempted(Schedule(input(3, {{"a", kHour}, {"b", kHour}}))).empty());
  // A job within b's guarantee waits too while a has credit (a pays it back beyond its
  // guarantee), and takes back once a has none.
  ScheduleDecision decision = Schedule(input(2, {{"a", kHour}}));
  EXPECT_TRUE(Preempted(decision).empty());
  EXPECT_NE(decision.waiting["b-next"].find("queue a runs beyond its guarantee on the credit it is owed"),
            std::string::npos)
      << decision.waiting["b-next"];
  EXPECT_EQ(Preempted(Schedule(input(2, {}))).size(), 1u);
  EXPECT_EQ(Preempted(Schedule(input(2, {{"a", -kHour}}))).size(), 1u);
}

// a holds 3 of its 4 CPUs and its job needs 2; nothing borrows, and 1 CPU is free.
TEST(SchedulePolicy, AQueueWithCreditTakesFromQueuesAtTheirGuaranteesWhenNothingIsLent) {
  SchedulingConfig config = HalfAndHalf();
  auto input = [&](std::vector<RunningJob> of_b, std::map<std::string, double> credit) {
    std::vector<RunningJob> running = {Running("a-1", 3, 0, "a", "ann")};
    running.insert(running.end(), of_b.begin(), of_b.end());
    ScheduleInput in = Cluster(config, 8, {Checkpointed(In(Job("a-big", 2), "a", "ann"))}, running);
    in.queue_credit = std::move(credit);
    return in;
  };
  const std::vector<RunningJob> b_at_its_guarantee = {Checkpointed(Started(Running("b-old", 2, 0, "b", "bob"), 3 * kHour)),
                                                      Checkpointed(Started(Running("b-new", 2, 0, "b", "bob"), kHour))};
  // Without credit a's job borrows, and nothing is lent to take back.
  EXPECT_TRUE(Preempted(Schedule(input(b_at_its_guarantee, {}))).empty());
  // On credit it takes from b, at its guarantee: the most served of b's jobs.
  ScheduleDecision decision = Schedule(input(b_at_its_guarantee, {{"a", kHour}}));
  EXPECT_EQ(Preempted(decision), std::vector<std::string>{"b-old"});
  ASSERT_EQ(decision.preempt.size(), 1u);
  EXPECT_NE(decision.preempt[0].reason.find("credit"), std::string::npos) << decision.preempt[0].reason;
  // Not jobs that have run less than min_run_before_preemption (10 minutes)...
  EXPECT_TRUE(Preempted(Schedule(input({Checkpointed(Started(Running("b-1", 2, 0, "b", "bob"), 5 * kMinute)),
                                        Checkpointed(Started(Running("b-2", 2, 0, "b", "bob"), 5 * kMinute))},
                                       {{"a", kHour}})))
                  .empty());
  // ...nor a queue's one job, nor a queue below its guarantee, nor a queue with credit.
  EXPECT_TRUE(Preempted(Schedule(input({Checkpointed(Started(Running("b-1", 4, 0, "b", "bob"), kHour))}, {{"a", kHour}})))
                  .empty());
  EXPECT_TRUE(Preempted(Schedule(input({Checkpointed(Started(Running("b-1", 2, 0, "b", "bob"), kHour)),
                                        Checkpointed(Started(Running("b-2", 1.5, 0, "b", "bob"), kHour))},
                                       {{"a", kHour}})))
                  .empty());
  EXPECT_TRUE(Preempted(Schedule(input(b_at_its_guarantee, {{"a", kHour}, {"b", kMinute}}))).empty());
  // ...nor jobs that keep no checkpoint: taken at every turn, they would start over each time.
  EXPECT_TRUE(Preempted(Schedule(input({Started(Running("b-old", 2, 0, "b", "bob"), 3 * kHour),
                                        Started(Running("b-new", 2, 0, "b", "bob"), kHour)},
                                       {{"a", kHour}})))
                  .empty());
}

// Credit moves jobs in turns: one taken back whenever its queue's credit is spent would,
// without a checkpoint, start over at every turn and, longer than a turn, never end. So a
// job that keeps no checkpoint does not start on credit, and says why.
TEST(SchedulePolicy, AJobThatKeepsNoCheckpointDoesNotStartOnCredit) {
  SchedulingConfig config = HalfAndHalf();
  auto input = [&](PendingJob a_big) {
    ScheduleInput in = Cluster(config, 8, {a_big},
                               {Running("a-1", 3, 0, "a", "ann"), Running("b-1", 3, 0, "b", "bob"),
                                Running("b-2", 2, 0, "b", "bob")});
    in.queue_credit["a"] = kHour;
    return in;
  };
  ScheduleDecision decision = Schedule(input(In(Job("a-big", 2), "a", "ann")));
  EXPECT_TRUE(Preempted(decision).empty());
  EXPECT_NE(decision.waiting["a-big"].find("keeps no checkpoint, so it does not start on credit"), std::string::npos)
      << decision.waiting["a-big"];
  EXPECT_EQ(Preempted(Schedule(input(Checkpointed(In(Job("a-big", 2), "a", "ann"))))).size(), 1u);
}

}  // namespace
}  // namespace shoal
