#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>

#include "backend/slurm/fake_slurm_commands.h"
#include "backend/slurm/slurm_preemption.h"
#include "backend/slurm/slurm_backend.h"
#include "backend/slurm/slurm_job.h"
#include "backend/slurm/slurm_launcher.h"
#include "backend/slurm/slurm_state.h"
#include "common/paths.h"
#include "common/files.h"
#include "testing/scratch_directory.h"

namespace shoal {
namespace {

RoleSpec Role(const std::string& name, int instances, double cpus, int64_t memory_mb, int gpus) {
  RoleSpec role;
  role.name = name;
  role.instances = instances;
  role.resources = Resources{cpus, memory_mb << 20, gpus};
  return role;
}

std::string Squeue(const std::string& jobs) { return R"({"meta": {}, "errors": [], "jobs": [)" + jobs + "]}"; }

TEST(SlurmJob, ComponentAsksForTheRolesResourcesPerTask) {
  EXPECT_EQ(ComponentOptions(Role("worker", 2, 1.5, 2048, 1)),
            (std::vector<std::string>{"--ntasks=2", "--cpus-per-task=2", "--mem-per-cpu=1024M", "--gpus-per-task=1"}));
  // No GPU option without GPUs; memory is rounded up so a task never gets less than it asked.
  EXPECT_EQ(ComponentOptions(Role("ps", 1, 3, 1000, 0)),
            (std::vector<std::string>{"--ntasks=1", "--cpus-per-task=3", "--mem-per-cpu=334M"}));
  RoleSpec tiny = Role("w", 1, 0.25, 0, 0);
  tiny.resources.memory_bytes = 1;
  EXPECT_EQ(SlurmCpus(tiny.resources), 1);
  EXPECT_EQ(SlurmMemoryMb(tiny.resources), 1);
}

TEST(SlurmJob, BatchScriptIsAHeterogeneousJobRunningTheAm) {
  BatchJob job;
  job.name = "shoal-job-7-2";
  job.attempt_dir = "/home/u/.shoal/jobs/job-7/attempt-2";
  job.roles = {Role("worker", 2, 1, 512, 1), Role("ps", 1, 1, 256, 0)};
  job.am_argv = {"/opt/shoal", "am", "--server", "http://10.0.0.1:7480", "--job", "job-7"};
  job.env = {{"SHOAL_JOB_ID", "job-7"}};
  job.extra_options = {"--partition=gpu"};
  std::string script = BatchScript(job);
  EXPECT_TRUE(script.starts_with("#!/bin/sh\n#SBATCH --job-name=shoal-job-7-2\n")) << script;
  EXPECT_NE(script.find("#SBATCH --output=/home/u/.shoal/jobs/job-7/attempt-2/am.log\n"), std::string::npos);
  EXPECT_NE(script.find("#SBATCH --no-requeue\n#SBATCH --partition=gpu\n"), std::string::npos);
  EXPECT_NE(script.find("#SBATCH --ntasks=2 --cpus-per-task=1 --mem-per-cpu=512M --gpus-per-task=1\n"
                        "#SBATCH hetjob\n"
                        "#SBATCH --ntasks=1 --cpus-per-task=1 --mem-per-cpu=256M\n"),
            std::string::npos)
      << script;
  EXPECT_NE(script.find("export SHOAL_JOB_ID=job-7\nexport SHOAL_SLURM_ROLES=worker,ps\n"), std::string::npos);
  EXPECT_TRUE(script.ends_with("exec /opt/shoal am --server http://10.0.0.1:7480 --job job-7\n")) << script;
  // All #SBATCH lines come before the first command, or sbatch ignores them.
  EXPECT_LT(script.rfind("#SBATCH"), script.find("export"));
}

TEST(SlurmJob, TheJobsTimeoutBecomesSlurmsTimeLimitWithAMinuteToSpare) {
  EXPECT_EQ(SlurmTimeOption(0, {}), "") << "no timeouts.job: the partition's limit";
  EXPECT_EQ(SlurmTimeOption(30'000, {}), "--time=2") << "30 s + 1 min, rounded up to minutes";
  EXPECT_EQ(SlurmTimeOption(3'600'000, {}), "--time=61");
  EXPECT_EQ(SlurmTimeOption(60'000, {}), "--time=2");
  EXPECT_EQ(SlurmTimeOption(30'000, {"--partition=gpu", "--time=10"}), "") << "the administrator's wins";
  EXPECT_EQ(SlurmTimeOption(30'000, {"-t5"}), "");
}

TEST(SlurmJob, ScriptQuotesWhatTheShellWouldExpand) {
  BatchJob job;
  job.roles = {Role("w", 1, 1, 1, 0)};
  job.am_argv = {"/it's/shoal"};
  job.env = {{"X", "$(rm -rf /)"}};
  std::string script = BatchScript(job);
  EXPECT_NE(script.find("export X='$(rm -rf /)'"), std::string::npos);
  EXPECT_NE(script.find("exec '/it'\\''s/shoal'"), std::string::npos);
  EXPECT_EQ(script.find("hetjob"), std::string::npos);  // one role: a plain job
}

TEST(SlurmJob, EachServersJobsHaveNamesOfTheirOwnAndSayWhoseTheyAre) {
  std::string here = ServerId("login1", "/home/ann/.shoal");
  EXPECT_EQ(here.size(), 8u);
  EXPECT_EQ(here, ServerId("login1", "/home/ann/.shoal")) << "the same across restarts";
  EXPECT_NE(here, ServerId("login1", "/home/bob/.shoal")) << "another home";
  EXPECT_NE(here, ServerId("login2", "/home/ann/.shoal")) << "another machine";
  EXPECT_EQ(SlurmJobName(here, "job-4", 2), "shoal-" + here + "-job-4-2");
  EXPECT_EQ(SlurmComment("ann", "job-4", 2, "http://10.0.0.1:8080"),
            "shoal:user=ann,job=job-4,attempt=2,server=http://10.0.0.1:8080");
  EXPECT_EQ(SlurmComment("a n\n#SBATCH --uid=0", "job-4", 1, "http://h:1"),
            "shoal:user=a_n__SBATCH_--uid=0,job=job-4,attempt=1,server=http://h:1")
      << "nothing a user name holds can start another #SBATCH line or split the option";
}

TEST(SlurmJob, SbatchAnswer) {
  EXPECT_EQ(ParseSbatchJobId("4242\n").value(), "4242");
  EXPECT_EQ(ParseSbatchJobId("4242;cluster\n").value(), "4242");
  EXPECT_FALSE(ParseSbatchJobId("sbatch: error: nope").ok());
  EXPECT_FALSE(ParseSbatchJobId("").ok());
}

TEST(SlurmJob, StepRunsOneTaskOnItsNodeWithItsOwnResources) {
  std::vector<std::string> agent{"/opt/shoal", "container", "--role", "worker"};
  auto argv = StepArgv({1, "node2"}, "shoal-worker-0", Resources{2, 1536LL << 20, 1}, agent);
  EXPECT_EQ(argv, (std::vector<std::string>{"srun", "--het-group=1", "--nodes=1", "--ntasks=1", "--nodelist=node2",
                                            "--exact", "--quiet", "--job-name=shoal-worker-0", "--cpus-per-task=2",
                                            "--mem=1536M", "--gres=gpu:1", "/opt/shoal", "container", "--role",
                                            "worker"}));
  auto plain = StepArgv({std::nullopt, "node1"}, "s", Resources{1, 1 << 20, 0}, agent);
  EXPECT_EQ(plain[1], "--nodes=1");
  EXPECT_NE(std::find(plain.begin(), plain.end(), "--gres=none"), plain.end());  // no GPU: none visible
}

TEST(SlurmJob, TasksPerNode) {
  EXPECT_EQ(ParseTasksPerNode("2(x3),1").value(), (std::vector<int>{2, 2, 2, 1}));
  EXPECT_EQ(ParseTasksPerNode("1").value(), (std::vector<int>{1}));
  EXPECT_FALSE(ParseTasksPerNode("").ok());
  EXPECT_FALSE(ParseTasksPerNode("2(x").ok());
  EXPECT_FALSE(ParseTasksPerNode("a,b").ok());
  EXPECT_FALSE(ParseTasksPerNode("1(x99999999)").ok());
  // many items, each under the per-item bound, may not add up past any cluster's size
  std::string huge = "1(x999999)";
  for (int i = 0; i < 100; ++i) huge += ",1(x999999)";
  auto refused = ParseTasksPerNode(huge);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("more than 65536 nodes"), std::string::npos) << refused.status().ToString();
  EXPECT_EQ(PlaceTasks({"a", "b"}, {2, 1}, 3).value(), (std::vector<std::string>{"a", "a", "b"}));
  EXPECT_FALSE(PlaceTasks({"a"}, {1, 1}, 2).ok());
  EXPECT_FALSE(PlaceTasks({"a"}, {1}, 2).ok());
}

TEST(SlurmLauncher, PlansEachRolesTasksOnItsComponentsNodes) {
  std::map<std::string, std::string> env{{"SHOAL_SLURM_ROLES", "worker,ps"},
                                         {"SLURM_HET_SIZE", "2"},
                                         {"SLURM_JOB_NODELIST_HET_GROUP_0", "node[1-2]"},
                                         {"SLURM_TASKS_PER_NODE_HET_GROUP_0", "1(x2)"},
                                         {"SLURM_JOB_NODELIST_HET_GROUP_1", "node1"},
                                         {"SLURM_TASKS_PER_NODE_HET_GROUP_1", "1"}};
  auto expand = [](const std::string& list) -> Result<std::vector<std::string>> {
    if (list == "node[1-2]") return std::vector<std::string>{"node1", "node2"};
    return std::vector<std::string>{list};
  };
  auto plan = PlanSteps(env, expand);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(plan->at("worker").size(), 2u);
  EXPECT_EQ(plan->at("worker")[1].node, "node2");
  EXPECT_EQ(plan->at("worker")[1].het_group, 0);
  EXPECT_EQ(plan->at("ps")[0].het_group, 1);

  std::map<std::string, std::string> plain{{"SHOAL_SLURM_ROLES", "worker"},
                                           {"SLURM_JOB_NODELIST", "node1"},
                                           {"SLURM_TASKS_PER_NODE", "2"}};
  auto single = PlanSteps(plain, expand);
  ASSERT_TRUE(single.ok());
  EXPECT_FALSE(single->at("worker")[0].het_group.has_value());
  EXPECT_FALSE(PlanSteps({}, expand).ok());
  plain.erase("SLURM_TASKS_PER_NODE");
  EXPECT_NE(PlanSteps(plain, expand).status().message().find("SLURM_TASKS_PER_NODE"), std::string::npos);
}

TEST(SlurmState, SqueueFoldsAHeterogeneousJobUnderItsLeader) {
  auto jobs = ParseSqueueJson(Squeue(
      R"({"job_id": 11, "het_job_id": 11, "het_job_offset": 0, "job_state": "NODE_FAIL", "state_reason": "None",
          "nodes": "node1", "exit_code": 15},
         {"job_id": 12, "het_job_id": 11, "het_job_offset": 1, "job_state": "NODE_FAIL", "nodes": "node2", "exit_code": 0},
         {"job_id": 20, "het_job_id": 0, "job_state": "FAILED", "state_reason": "NonZeroExitCode", "nodes": "node1",
          "exit_code": 768},
         {"job_id": 30, "het_job_id": 30, "job_state": "COMPLETED", "exit_code": 0},
         {"job_id": 31, "het_job_id": 30, "job_state": "RUNNING", "exit_code": 0})"));
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ(jobs->size(), 3u);
  EXPECT_EQ(jobs->at("11").state, "NODE_FAIL");
  EXPECT_EQ(jobs->at("11").nodes, "node1,node2");
  EXPECT_EQ(jobs->at("11").signal, 15);
  EXPECT_EQ(jobs->at("20").exit_code, 3);  // a wait status
  EXPECT_EQ(jobs->at("30").state, "RUNNING");  // not over while a component runs
}

TEST(SlurmState, ParsersSurviveHostileInput) {
  EXPECT_FALSE(ParseSqueueJson("").ok());
  EXPECT_FALSE(ParseSqueueJson("{").ok());
  EXPECT_FALSE(ParseSqueueJson("[]").ok());
  EXPECT_FALSE(ParseSqueueJson(R"({"jobs": 3})").ok());
  auto odd = ParseSqueueJson(R"({"jobs": [1, "x", null, {"job_id": "7"}, {"job_id": 1e300},
                                {"job_id": 8, "job_state": 5, "exit_code": "x", "het_job_id": [1]},
                                {"job_id": 9, "job_state": ["RUNNING"]}]})");
  ASSERT_TRUE(odd.ok());
  EXPECT_EQ(odd->size(), 2u);
  EXPECT_EQ(odd->at("8").state, "");
  EXPECT_EQ(odd->at("9").state, "RUNNING");  // later releases give a list
  EXPECT_FALSE(ParseSinfoJson("nope").ok());
  EXPECT_FALSE(ParseSacctJson(R"({"jobs": {}})").ok());
  EXPECT_FALSE(ParseScontrolJobs("slurm_load_jobs error: Invalid job id specified").ok());
  EXPECT_EQ(GpusInGres("gpu:"), 0);
  EXPECT_EQ(GpusInGres("gpu:x:99999999999"), 0);
  EXPECT_EQ(GpusInGres("(null)"), 0);
}

TEST(SlurmState, SacctAndScontrolAnswerForJobsSqueueForgot) {
  auto sacct = ParseSacctJson(R"({"jobs": [
      {"job_id": 40, "het": {"job_id": 40, "job_offset": 0}, "state": {"current": "TIMEOUT", "reason": "None"},
       "nodes": "node1", "exit_code": {"status": "SIGNALED", "return_code": 0, "signal": {"signal_id": 15}}},
      {"job_id": 41, "het": {"job_id": 40, "job_offset": 1}, "state": {"current": "CANCELLED"}, "nodes": "node2"}]})");
  ASSERT_TRUE(sacct.ok()) << sacct.status().ToString();
  EXPECT_EQ(sacct->at("40").state, "TIMEOUT");
  EXPECT_EQ(sacct->at("40").signal, 15);
  auto shown = ParseScontrolJobs(
      "JobId=50 HetJobId=50 HetJobOffset=0 JobName=shoal-job-1-1\n   JobState=PREEMPTED Reason=None Dependency=(null)\n"
      "   Requeue=0 ExitCode=0:9\n   NodeList=node1\n\n"
      "JobId=51 HetJobId=50 HetJobOffset=1 JobName=shoal-job-1-1\n   JobState=COMPLETED Reason=None\n   NodeList=node2\n");
  ASSERT_TRUE(shown.ok()) << shown.status().ToString();
  EXPECT_EQ(shown->size(), 1u);
  EXPECT_EQ(shown->at("50").state, "PREEMPTED");
  auto during_grace = ParseScontrolJobs("JobId=51 JobName=x\n   JobState=RUNNING Reason=None\n   PreemptTime=2026-12-03T07:46:55\n");
  ASSERT_TRUE(during_grace.ok());
  EXPECT_TRUE(during_grace->at("51").preempted);
  EXPECT_FALSE(shown->at("50").preempted) << "no PreemptTime";
  EXPECT_EQ(shown->at("50").signal, 9);
}

// What the test cluster's own commands printed (scripts/capture-slurm-fixtures.sh, Slurm
// 22.05): the parsers must read the real shapes, not only the ones written here.
std::string Fixture(const std::string& name) {
  std::ifstream file(std::string(SHOAL_SLURM_TESTDATA) + "/" + name);
  EXPECT_TRUE(file) << name;
  return std::string(std::istreambuf_iterator<char>(file), {});
}

TEST(SlurmFixtures, SqueueOfARunningHeterogeneousJobAndAPendingOne) {
  auto jobs = ParseSqueueJson(Fixture("squeue-running-het-and-pending.json"));
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ(jobs->size(), 2u) << "the second component is folded under its leader";
  EXPECT_EQ(jobs->at("1").state, "RUNNING");
  EXPECT_NE(jobs->at("1").nodes.find("node1"), std::string::npos) << jobs->at("1").nodes;
  EXPECT_NE(jobs->at("1").nodes.find("node2"), std::string::npos) << jobs->at("1").nodes;
  EXPECT_EQ(jobs->at("3").state, "PENDING");
  EXPECT_FALSE(IsFinalSlurmState(jobs->at("3").state));
}

TEST(SlurmFixtures, ScontrolOfEndedJobs) {
  auto failed = ParseScontrolJobs(Fixture("scontrol-failed-exit-3.txt"));
  ASSERT_TRUE(failed.ok()) << failed.status().ToString();
  EXPECT_EQ(failed->at("4").state, "FAILED");
  EXPECT_EQ(failed->at("4").exit_code, 3);
  EXPECT_EQ(failed->at("4").nodes, "node1");
  auto completed = ParseScontrolJobs(Fixture("scontrol-completed.txt"));
  ASSERT_TRUE(completed.ok()) << completed.status().ToString();
  EXPECT_EQ(completed->at("5").state, "COMPLETED");
  EXPECT_EQ(completed->at("5").exit_code, 0);
  auto cancelled = ParseScontrolJobs(Fixture("scontrol-cancelled-het.txt"));
  ASSERT_TRUE(cancelled.ok()) << cancelled.status().ToString();
  ASSERT_EQ(cancelled->size(), 1u) << "one job: both components under the leader";
  EXPECT_EQ(cancelled->at("1").state, "CANCELLED");
  EXPECT_EQ(cancelled->at("1").signal, 15);
  auto running = ParseScontrolJobs(Fixture("scontrol-running-het.txt"));
  ASSERT_TRUE(running.ok()) << running.status().ToString();
  EXPECT_EQ(running->at("1").state, "RUNNING");
}

TEST(SlurmFixtures, SinfoOfTheTwoNodeCluster) {
  auto nodes = ParseSinfoJson(Fixture("sinfo.json"));
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  ASSERT_EQ(nodes->size(), 2u);
  for (const SlurmNode& node : *nodes) {
    EXPECT_EQ(node.resources.cpus, 4) << node.name;
    EXPECT_EQ(node.resources.memory_bytes, 4000ll << 20) << node.name;
    EXPECT_EQ(node.resources.gpus, 2) << node.name;
  }
  EXPECT_EQ(UsableNodeCount(*nodes), 2);
  EXPECT_TRUE(UnhealthyNodes(Fixture("sinfo-node-states.txt")).empty());
}

TEST(SlurmFixtures, SacctFromTheClustersAccountingFoldsHetJobsUnderTheirLeader) {
  auto jobs = ParseSacctJson(Fixture("sacct-het-cancelled-failed-completed.json"));
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ(jobs->size(), 3u) << "the heterogeneous job's two components are one job";
  EXPECT_EQ(jobs->at("2").state, "CANCELLED");
  EXPECT_EQ(jobs->at("2").nodes, "node1,node2") << "the nodes of both components";
  EXPECT_EQ(jobs->at("5").state, "FAILED");
  EXPECT_EQ(jobs->at("6").state, "COMPLETED");
  EXPECT_TRUE(IsFinalSlurmState(jobs->at("5").state));
  // Slurm 22.05's JSON gives the failed job (exit 3) an exit_code of 0, where `sacct -o
  // ExitCode` says 3:0: only the state is taken from sacct, never a verdict on the program.
  EXPECT_EQ(jobs->at("5").exit_code, 0);
}

TEST(SlurmFixtures, SacctWithoutAccountingIsAnErrorNotAnEmptyAnswer) {
  std::string said = Fixture("sacct-without-accounting.txt");
  EXPECT_NE(said.find("accounting storage is disabled"), std::string::npos) << said;
  EXPECT_FALSE(ParseSacctJson(said).ok());
}

TEST(SlurmState, ReasonsInWords) {
  EXPECT_EQ(DescribeWaiting({.state = "PENDING", .reason = "Resources"}),
            "waiting for Slurm: the nodes it needs are busy (PENDING, Resources)");
  EXPECT_EQ(DescribeWaiting({.state = "PENDING", .reason = "SomethingNew"}), "waiting for Slurm (PENDING, SomethingNew)");
  EXPECT_EQ(DescribeWaiting({.state = "RUNNING"}), "");
  EXPECT_EQ(UnhealthyNodes("node1 mixed\nnode2 down*\nnode3 idle*\nnode4 drained\nnode2 down*\nnode5\n\nnode6 allocated\n"),
            (std::vector<std::string>{"node2", "node3", "node4"}));
  EXPECT_EQ(DescribeClusterEnd({.state = "NODE_FAIL", .nodes = "node[1-2]"}, {"node2"}),
            "node node2 failed; Slurm ended the attempt (NODE_FAIL)");
  EXPECT_NE(DescribeClusterEnd({.state = "NODE_FAIL", .nodes = "node[1-2]"}, {}).find("node[1-2]"), std::string::npos);
  EXPECT_NE(DescribeClusterEnd({.state = "PREEMPTED"}, {}).find("preempted"), std::string::npos);
  EXPECT_NE(DescribeClusterEnd({.state = "TIMEOUT"}, {}).find("time limit"), std::string::npos);
  EXPECT_TRUE(IsClusterFailure("NODE_FAIL"));
  EXPECT_FALSE(IsClusterFailure("COMPLETED"));
  EXPECT_FALSE(IsFinalSlurmState("PENDING"));
  EXPECT_TRUE(IsFinalSlurmState("CANCELLED"));
}

TEST(SlurmState, CapacityCountsUsableNodes) {
  auto nodes = ParseSinfoJson(R"({"nodes": [
      {"name": "node1", "address": "10.0.0.11", "state": "idle", "cpus": 4, "real_memory": 4000, "gres": "gpu:2"},
      {"name": "node2", "address": "10.0.0.12", "state": "mixed", "cpus": 8, "real_memory": 2000,
       "gres": "gpu:a100:4(S:0-1),shard:8"},
      {"name": "node3", "state": "down", "state_flags": ["NOT_RESPONDING"], "cpus": 64, "real_memory": 1, "gres": ""}]})");
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  ASSERT_EQ(nodes->size(), 3u);
  EXPECT_EQ((*nodes)[2].address, "node3");
  ClusterCapacity capacity = CapacityOf(*nodes);
  EXPECT_EQ(capacity.total.cpus, 12);
  EXPECT_EQ(capacity.total.gpus, 6);
  EXPECT_EQ(capacity.total.memory_bytes, 6000LL << 20);
  EXPECT_EQ(capacity.largest.cpus, 8);
  EXPECT_EQ(capacity.largest.memory_bytes, 4000LL << 20);
  EXPECT_EQ(UsableNodeCount(*nodes), 2);
}

TEST(SlurmState, NodesSayWhatIsAllocatedAndWhyTheyAreDown) {
  auto nodes = ParseSinfoJson(R"json({"nodes": [
      {"name": "node1", "state": "mixed", "cpus": 4, "real_memory": 4000, "gres": "gpu:2", "gres_used": "gpu:1(IDX:0)",
       "alloc_cpus": 3, "alloc_memory": 1024, "reason": ""},
      {"name": "node2", "state": "idle", "state_flags": ["DRAIN"], "cpus": 4, "real_memory": 4000,
       "reason": "disk replaced", "alloc_cpus": 0}]})json");
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  EXPECT_EQ((*nodes)[0].allocated.cpus, 3);
  EXPECT_EQ((*nodes)[0].allocated.memory_bytes, 1024LL << 20);
  EXPECT_EQ((*nodes)[0].allocated.gpus, 1);
  EXPECT_EQ((*nodes)[1].state, "idle+drain");
  EXPECT_EQ((*nodes)[1].reason, "disk replaced");
}

class SlurmBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    commands_.answers["sinfo"] = [](const std::vector<std::string>& argv) {
      if (argv.size() > 1 && argv[1] == "--json") {
        return CommandOutput{0, R"({"nodes": [{"name": "node1", "state": "idle", "cpus": 4, "real_memory": 4000,
                                   "gres": "gpu:2"}, {"name": "node2", "state": "idle", "cpus": 4,
                                   "real_memory": 4000, "gres": "gpu:2"}]})", ""};
      }
      return CommandOutput{0, "node1 allocated\nnode2 down*\n", ""};
    };
    commands_.answers["sbatch"] = [](const std::vector<std::string>&) { return CommandOutput{0, "77\n", ""}; };
    commands_.answers["squeue"] = [this](const std::vector<std::string>&) { return CommandOutput{0, Squeue(squeue_), ""}; };
    ASSERT_TRUE(backend_.Connect().ok());
  }

  AttemptLaunch Launch() {
    AttemptLaunch launch{"job-3", 1, "http://10.253.0.1:7480", dir_.string() + "/attempt-1", {}};
    launch.spec.roles = {Role("worker", 2, 1, 1024, 1)};
    return launch;
  }

  testing_support::ScratchDirectory scratch_{"slurm"};
  std::filesystem::path dir_ = scratch_.path();
  FakeSlurmCommands commands_;
  FakeClock clock_{1'000};
  std::string squeue_;
  SlurmBackend backend_{commands_, "/opt/shoal", SlurmOptions{.kill_grace_ms = 0}, clock_};
};

TEST_F(SlurmBackendTest, CapacityComesFromSinfo) {
  ASSERT_TRUE(backend_.Connect().ok());
  EXPECT_EQ(backend_.Capacity().total.cpus, 8);
  EXPECT_EQ(backend_.Capacity().largest.gpus, 2);
  commands_.answers["sinfo"] = [](const std::vector<std::string>&) {
    return CommandOutput{1, "", "slurm_load_partitions: Unable to contact slurm controller"};
  };
  Status s = backend_.Connect();
  EXPECT_NE(s.message().find("Unable to contact slurm controller"), std::string::npos) << s.ToString();
}

TEST_F(SlurmBackendTest, NodesComeFromSinfoAtMostEveryTwoSeconds) {
  std::vector<ClusterNode> nodes = backend_.Nodes();
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].name, "node1");
  EXPECT_EQ(nodes[0].capacity.cpus, 4);
  ASSERT_TRUE(nodes[0].allocated.has_value()) << "Slurm says what every job holds, not only Shoal's";
  int asked = commands_.CountCalls("sinfo");
  backend_.Nodes();
  EXPECT_EQ(commands_.CountCalls("sinfo"), asked) << "a second look within 2 s is the first's";
  clock_.Advance(2000);
  backend_.Nodes();
  EXPECT_EQ(commands_.CountCalls("sinfo"), asked + 1);
}

TEST_F(SlurmBackendTest, StartSubmitsTheScriptAndPollFollowsSqueue) {
  auto handle = backend_.StartAttempt(Launch());
  ASSERT_TRUE(handle.ok()) << handle.status().ToString();
  EXPECT_EQ(handle->backend_id, "77");
  EXPECT_EQ(commands_.calls.back(), (std::vector<std::string>{"sbatch", "--parsable", dir_.string() + "/attempt-1/batch.sh"}));
  std::string script = ReadFile(dir_.string() + "/attempt-1/batch.sh").value();
  EXPECT_NE(script.find("--backend slurm"), std::string::npos);
  EXPECT_NE(script.find("--gpus-per-task=1"), std::string::npos);

  squeue_ = R"({"job_id": 77, "het_job_id": 0, "job_state": "PENDING", "state_reason": "Resources"})";
  EXPECT_FALSE(backend_.PollAttempt(*handle).has_value());
  EXPECT_EQ(backend_.Note(*handle).message, "waiting for Slurm: the nodes it needs are busy (PENDING, Resources)");
  // Polls are throttled: no new squeue until the interval has passed.
  int squeues = commands_.CountCalls("squeue");
  squeue_ = R"({"job_id": 77, "het_job_id": 0, "job_state": "COMPLETED", "exit_code": 0})";
  EXPECT_FALSE(backend_.PollAttempt(*handle).has_value());
  EXPECT_EQ(commands_.CountCalls("squeue"), squeues);
  clock_.Advance(1000);
  auto exit = backend_.PollAttempt(*handle);
  ASSERT_TRUE(exit.has_value());
  EXPECT_TRUE(exit->success());
  EXPECT_FALSE(backend_.Note(*handle).ended_by_cluster);
}

TEST_F(SlurmBackendTest, ANodeFailureEndsTheAttemptNamingTheNode) {
  auto handle = backend_.StartAttempt(Launch());
  ASSERT_TRUE(handle.ok());
  squeue_ = R"({"job_id": 77, "het_job_id": 0, "job_state": "NODE_FAIL", "nodes": "node[1-2]", "exit_code": 15})";
  auto exit = backend_.PollAttempt(*handle);
  ASSERT_TRUE(exit.has_value());
  AttemptNote note = backend_.Note(*handle);
  EXPECT_TRUE(note.ended_by_cluster);
  EXPECT_EQ(note.message, "node node2 failed; Slurm ended the attempt (NODE_FAIL)");
  EXPECT_EQ(note.failed_hosts, std::vector<std::string>{"node2"}) << "a node Connect() never read keeps its name";
}

TEST_F(SlurmBackendTest, AJobSlurmChoseForPreemptionIsPreemptedEvenWhenItsAmEndedInTheGrace) {
  auto handle = backend_.StartAttempt(Launch());
  ASSERT_TRUE(handle.ok());
  // The AM stopped its tasks on SIGTERM and exited 1 before the grace ended: Slurm says
  // FAILED, but its preempt time says why.
  squeue_ = R"({"job_id": 77, "het_job_id": 0, "job_state": "FAILED", "exit_code": 256, "preempt_time": 1796284001})";
  auto exit = backend_.PollAttempt(*handle);
  ASSERT_TRUE(exit.has_value());
  AttemptNote note = backend_.Note(*handle);
  EXPECT_TRUE(note.ended_by_cluster);
  EXPECT_TRUE(note.preempted);
  EXPECT_EQ(note.message, "Slurm preempted the attempt for another job (PREEMPTED)");
}

TEST_F(SlurmBackendTest, AFailureWithoutAPreemptTimeIsNotAPreemption) {
  auto handle = backend_.StartAttempt(Launch());
  ASSERT_TRUE(handle.ok());
  squeue_ = R"({"job_id": 77, "het_job_id": 0, "job_state": "FAILED", "exit_code": 256, "preempt_time": 0})";
  ASSERT_TRUE(backend_.PollAttempt(*handle).has_value());
  AttemptNote note = backend_.Note(*handle);
  EXPECT_FALSE(note.ended_by_cluster);
  EXPECT_FALSE(note.preempted);
}

// The poller records a job's final state, then asks sinfo which node failed; until the
// answer is in, the attempt is not reported ended. (It was: the scheduler ended such an
// attempt with no cause, keeping the AM's "the container ended before its task did".)
TEST_F(SlurmBackendTest, AnAttemptTheClusterEndedIsReportedEndedOnlyWithItsCause) {
  auto handle = backend_.StartAttempt(Launch());
  ASSERT_TRUE(handle.ok());
  std::optional<bool> ended_while_asking;
  commands_.answers["sinfo"] = [&](const std::vector<std::string>&) {
    if (!ended_while_asking) ended_while_asking = backend_.PollAttempt(*handle).has_value();
    return CommandOutput{0, "node1 mixed\nnode2 down*\n", ""};
  };
  squeue_ = R"({"job_id": 77, "het_job_id": 0, "job_state": "NODE_FAIL", "nodes": "node[1-2]", "exit_code": 15})";
  ASSERT_TRUE(backend_.PollAttempt(*handle).has_value());
  ASSERT_TRUE(ended_while_asking.has_value()) << "sinfo was asked";
  EXPECT_FALSE(*ended_while_asking) << "not ended while its cause is still being found";
  EXPECT_EQ(backend_.Note(*handle).message, "node node2 failed; Slurm ended the attempt (NODE_FAIL)");
}

// A failed node back in service at once (ReturnToService=2, slurmd restarted) is no
// longer down when the end is seen: the node that stopped responding while the job ran
// is named.
TEST_F(SlurmBackendTest, ANodeFailureNamesTheNodeThatStoppedRespondingEvenWhenItIsBack) {
  std::string nodes_said = "node1 mixed\nnode2 mixed\n";
  commands_.answers["sinfo"] = [&](const std::vector<std::string>&) { return CommandOutput{0, nodes_said, ""}; };
  auto handle = backend_.StartAttempt(Launch());
  ASSERT_TRUE(handle.ok());
  squeue_ = R"({"job_id": 77, "het_job_id": 0, "job_state": "RUNNING", "nodes": "node[1-2]"})";
  EXPECT_FALSE(backend_.PollAttempt(*handle).has_value());
  nodes_said = "node1 mixed\nnode2 mixed*\n";
  int checks = commands_.CountCalls("sinfo");
  clock_.Advance(1000);
  EXPECT_FALSE(backend_.PollAttempt(*handle).has_value());
  EXPECT_EQ(commands_.CountCalls("sinfo"), checks) << "asked again within the node check interval";
  clock_.Advance(5000);
  EXPECT_FALSE(backend_.PollAttempt(*handle).has_value());
  EXPECT_EQ(commands_.CountCalls("sinfo"), checks + 1);
  nodes_said = "node1 idle\nnode2 idle\n";
  squeue_ = R"({"job_id": 77, "het_job_id": 0, "job_state": "NODE_FAIL", "nodes": "node[1-2]", "exit_code": 15})";
  clock_.Advance(1000);
  ASSERT_TRUE(backend_.PollAttempt(*handle).has_value());
  EXPECT_EQ(backend_.Note(*handle).message, "node node2 failed; Slurm ended the attempt (NODE_FAIL)");
}

TEST_F(SlurmBackendTest, AScancelFromOutsideShoalEndsTheAttemptAsTheClustersWhileShoalsOwnIsAKill) {
  auto outside = backend_.StartAttempt(Launch());
  ASSERT_TRUE(outside.ok());
  squeue_ = R"({"job_id": 77, "het_job_id": 0, "job_state": "CANCELLED", "nodes": "node1", "exit_code": 15})";
  ASSERT_TRUE(backend_.PollAttempt(*outside).has_value());
  AttemptNote note = backend_.Note(*outside);
  EXPECT_TRUE(note.ended_by_cluster) << "retried within max_attempts, not KILLED";
  EXPECT_EQ(note.message, "the Slurm job was cancelled outside Shoal (CANCELLED)");

  commands_.answers["sbatch"] = [](const std::vector<std::string>&) { return CommandOutput{0, "78\n", ""}; };
  AttemptLaunch launch = Launch();
  launch.attempt = 2;
  auto killed = backend_.StartAttempt(launch);
  ASSERT_TRUE(killed.ok());
  squeue_ = R"({"job_id": 78, "het_job_id": 0, "job_state": "CANCELLED", "nodes": "node1", "exit_code": 15})";
  backend_.KillAttempt(launch, *killed);
  ASSERT_TRUE(backend_.PollAttempt(*killed).has_value());
  EXPECT_FALSE(backend_.Note(*killed).ended_by_cluster) << "Shoal's own scancel: the user's kill";
  EXPECT_NE(commands_.CountCalls("scancel"), 0);
}

TEST_F(SlurmBackendTest, AJobSqueueForgotIsAskedOfScontrol) {
  auto handle = backend_.StartAttempt(Launch());
  ASSERT_TRUE(handle.ok());
  commands_.answers["scontrol"] = [](const std::vector<std::string>&) {
    return CommandOutput{0, "JobId=77 JobName=x\n   JobState=TIMEOUT Reason=TimeLimit\n   ExitCode=0:15\n", ""};
  };
  ASSERT_TRUE(backend_.PollAttempt(*handle).has_value());
  EXPECT_EQ(backend_.Note(*handle).message, "the attempt reached its Slurm time limit (TIMEOUT)");
}

TEST_F(SlurmBackendTest, MoreRolesThanNodesIsRefusedBeforeSbatch) {
  AttemptLaunch launch = Launch();
  launch.spec.roles = {Role("chief", 1, 1, 64, 0), Role("worker", 1, 1, 64, 0), Role("ps", 1, 1, 64, 0)};
  auto handle = backend_.StartAttempt(launch);
  ASSERT_FALSE(handle.ok());
  EXPECT_NE(handle.status().message().find("3 roles but the Slurm cluster has 2 usable node(s)"), std::string::npos)
      << handle.status().message();
  EXPECT_EQ(commands_.CountCalls("sbatch"), 0);
  EXPECT_EQ(backend_.Accepts(launch.spec).code(), StatusCode::kInvalidArgument);
  launch.spec.roles.pop_back();
  EXPECT_TRUE(backend_.Accepts(launch.spec).ok());
  launch.spec.framework = "mpi";
  EXPECT_NE(backend_.Accepts(launch.spec).message().find("mpi jobs do not run on the Slurm backend"), std::string::npos);
}

TEST_F(SlurmBackendTest, SlurmsRefusalIsTheAttemptsError) {
  commands_.answers["sbatch"] = [](const std::vector<std::string>&) {
    return CommandOutput{1, "", "sbatch: error: Batch job submission failed: Requested node configuration is not available\n"};
  };
  auto handle = backend_.StartAttempt(Launch());
  ASSERT_FALSE(handle.ok());
  EXPECT_NE(handle.status().message().find("Requested node configuration is not available"), std::string::npos);
}

TEST_F(SlurmBackendTest, KillOfAWaitingJobCancelsItAtOnce) {
  auto handle = backend_.StartAttempt(Launch());
  ASSERT_TRUE(handle.ok());
  commands_.answers["scancel"] = [this](const std::vector<std::string>&) {
    squeue_ = R"({"job_id": 77, "het_job_id": 0, "job_state": "CANCELLED"})";
    return CommandOutput{0, "", ""};
  };
  squeue_ = R"({"job_id": 77, "het_job_id": 0, "job_state": "PENDING", "state_reason": "Priority"})";
  backend_.KillAttempt(Launch(), *handle);
  EXPECT_EQ(commands_.calls.back(), (std::vector<std::string>{"squeue", "--json"}));
  EXPECT_EQ(commands_.CountCalls("scancel"), 1);
}

TEST_F(SlurmBackendTest, KillSignalsTheAmThenCancelsTheJob) {
  auto handle = backend_.StartAttempt(Launch());
  ASSERT_TRUE(handle.ok());
  commands_.answers["scancel"] = [this](const std::vector<std::string>& argv) {
    if (argv.size() == 2) squeue_ = R"({"job_id": 77, "het_job_id": 0, "job_state": "CANCELLED", "exit_code": 15})";
    return CommandOutput{0, "", ""};
  };
  squeue_ = R"({"job_id": 77, "het_job_id": 0, "job_state": "RUNNING"})";
  backend_.KillAttempt(Launch(), *handle);
  std::vector<std::vector<std::string>> scancels;
  for (const auto& c : commands_.calls) {
    if (c[0] == "scancel") scancels.push_back(c);
  }
  ASSERT_EQ(scancels.size(), 2u);
  EXPECT_EQ(scancels[0], (std::vector<std::string>{"scancel", "--batch", "--signal=USR2", "77"}));
  EXPECT_EQ(scancels[1], (std::vector<std::string>{"scancel", "77"}));
  EXPECT_TRUE(backend_.PollAttempt(*handle).has_value());
}

}  // namespace
}  // namespace shoal

namespace shoal {
namespace {

TEST(SlurmPreemptionReason, OnlyAJobWithAPreemptTimeWasPreempted) {
  FakeSlurmCommands commands;
  std::string answer;
  commands.answers["scontrol"] = [&](const std::vector<std::string>& argv) {
    EXPECT_EQ(argv, (std::vector<std::string>{"scontrol", "show", "job", "528"}));
    return CommandOutput{0, answer, ""};
  };
  answer = "JobId=528 JobName=x\n   JobState=RUNNING Reason=None\n   PreemptTime=2026-12-03T07:46:55\n";
  EXPECT_EQ(SlurmPreemptionReason(commands, "528"), "Slurm preempted the job for another job");
  answer = "JobId=528 JobName=x\n   JobState=RUNNING Reason=None\n   PreemptTime=None\n";
  EXPECT_EQ(SlurmPreemptionReason(commands, "528"), "") << "a scancel from outside Shoal";
  commands.answers.erase("scontrol");
  EXPECT_EQ(SlurmPreemptionReason(commands, "528"), "") << "Slurm could not be asked";
  EXPECT_EQ(SlurmPreemptionReason(commands, ""), "") << "not in a Slurm job";
}

}  // namespace
}  // namespace shoal
