#include <gtest/gtest.h>

#include "runtime/framework.h"
#include "runtime/launch_plan.h"

namespace shoal {
namespace {

ClusterView TwoWorkers() {
  ClusterView cluster;
  cluster.job_id = "job-7";
  cluster.attempt = 2;
  cluster.am_addr = "127.0.0.1:4000";
  cluster.tasks = {{"worker", 0, 0, "10.0.0.1", {29500}, {}}, {"worker", 1, 1, "10.0.0.2", {29501}, {1, 3}}};
  return cluster;
}

JobSpec Spec(const std::string& framework) {
  JobSpec spec;
  spec.name = "ddp";
  spec.framework = framework;
  spec.max_attempts = 3;
  spec.roles.push_back(RoleSpec{.name = "worker", .instances = 2, .command = "true"});
  return spec;
}

TEST(Environment, ShoalContract) {
  ClusterView cluster = TwoWorkers();
  EnvMap env = FindFramework("generic")->TaskEnvironment(Spec("generic"), cluster, cluster.tasks[1]);
  EXPECT_EQ(env["SHOAL_JOB_ID"], "job-7");
  EXPECT_EQ(env["SHOAL_ATTEMPT"], "2");
  EXPECT_EQ(env["SHOAL_ROLE"], "worker");
  EXPECT_EQ(env["SHOAL_INDEX"], "1");
  EXPECT_EQ(env["SHOAL_RANK"], "1");
  EXPECT_EQ(env["SHOAL_WORLD_SIZE"], "2");
  EXPECT_EQ(env["SHOAL_AM_ADDR"], "127.0.0.1:4000");
  EXPECT_EQ(env["SHOAL_PORT"], "29501");
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "1,3");
  EXPECT_EQ(env.count("MASTER_ADDR"), 0u) << "generic jobs get no torchrun variables";
}

TEST(Environment, PyTorchGetsTorchrunVariables) {
  ClusterView cluster = TwoWorkers();
  EnvMap env = FindFramework("pytorch")->TaskEnvironment(Spec("pytorch"), cluster, cluster.tasks[1]);
  EXPECT_EQ(env["MASTER_ADDR"], "10.0.0.1");
  EXPECT_EQ(env["MASTER_PORT"], "29500");
  EXPECT_EQ(env["RANK"], "1");
  EXPECT_EQ(env["WORLD_SIZE"], "2");
  EXPECT_EQ(env["LOCAL_RANK"], "0");
  EXPECT_EQ(env["LOCAL_WORLD_SIZE"], "1");
  EXPECT_EQ(env["GROUP_RANK"], "1");
  EXPECT_EQ(env["TORCHELASTIC_RESTART_COUNT"], "1");
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "1,3");
}

TEST(Environment, TensorFlowConfigLeavesTheEvaluatorOut) {
  ClusterView cluster;
  cluster.job_id = "job-9";
  cluster.tasks = {{"chief", 0, 0, "h0", {100}, {}}, {"worker", 0, 1, "h1", {101}, {}}, {"worker", 1, 2, "h2", {102}, {}},
                   {"ps", 0, 3, "h3", {103}, {}}, {"evaluator", 0, 4, "h4", {104}, {}}};
  JobSpec spec = Spec("tensorflow");
  const auto* tf = FindFramework("tensorflow");
  EnvMap worker = tf->TaskEnvironment(spec, cluster, cluster.tasks[2]);
  Json config = Json::parse(worker["TF_CONFIG"]);
  EXPECT_EQ(config["cluster"], Json::parse(R"({"chief": ["h0:100"], "worker": ["h1:101", "h2:102"], "ps": ["h3:103"]})"));
  EXPECT_EQ(config["task"], Json::parse(R"({"type": "worker", "index": 1})"));
  EXPECT_EQ(Json::parse(worker["TF_CLUSTER_DEF"]), config["cluster"]);
  EXPECT_EQ(worker["TF_ROLE"], "worker");
  EXPECT_EQ(worker["TF_INDEX"], "1");
  Json evaluator = Json::parse(tf->TaskEnvironment(spec, cluster, cluster.tasks[4])["TF_CONFIG"]);
  EXPECT_FALSE(evaluator["cluster"].contains("evaluator"));
  EXPECT_EQ(evaluator["task"]["type"], "evaluator");
}

TEST(Environment, MxNetFindsTheScheduler) {
  ClusterView cluster;
  cluster.tasks = {{"scheduler", 0, 0, "h0", {9000}, {}}, {"server", 0, 1, "h1", {9001}, {}},
                   {"worker", 0, 2, "h2", {9002}, {}}, {"worker", 1, 3, "h3", {9003}, {}}};
  EnvMap env = FindFramework("mxnet")->TaskEnvironment(Spec("mxnet"), cluster, cluster.tasks[1]);
  EXPECT_EQ(env["DMLC_ROLE"], "server");
  EXPECT_EQ(env["DMLC_PS_ROOT_URI"], "h0");
  EXPECT_EQ(env["DMLC_PS_ROOT_PORT"], "9000");
  EXPECT_EQ(env["DMLC_NUM_SERVER"], "1");
  EXPECT_EQ(env["DMLC_NUM_WORKER"], "2");
}

TEST(Environment, XgboostFindsTheTracker) {
  ClusterView cluster = TwoWorkers();
  cluster.services[kRabitTrackerService] = "127.0.0.1:9091";
  EnvMap env = FindFramework("xgboost")->TaskEnvironment(Spec("xgboost"), cluster, cluster.tasks[1]);
  EXPECT_EQ(env["DMLC_TRACKER_URI"], "127.0.0.1");
  EXPECT_EQ(env["DMLC_TRACKER_PORT"], "9091");
  EXPECT_EQ(env["DMLC_TASK_ID"], "1");
  EXPECT_EQ(env["DMLC_NUM_WORKER"], "2");
}

TEST(Environment, PyTorchWithSeveralProcessesPerTask) {
  ClusterView cluster = TwoWorkers();
  for (auto& task : cluster.tasks) task.processes = 3;
  const auto* torch = FindFramework("pytorch");
  EnvMap task = torch->TaskEnvironment(Spec("pytorch"), cluster, cluster.tasks[1]);
  EXPECT_EQ(task["GROUP_RANK"], "1");
  EXPECT_EQ(task["WORLD_SIZE"], "6");
  EnvMap process = torch->ProcessEnvironment(cluster, cluster.tasks[1], 2);
  EXPECT_EQ(process["RANK"], "5");
  EXPECT_EQ(process["LOCAL_RANK"], "2");
  EXPECT_EQ(process["LOCAL_WORLD_SIZE"], "3");
  EXPECT_EQ(process["WORLD_SIZE"], "6");
  EXPECT_EQ(process["SHOAL_LOCAL_RANK"], "2");
}

// The layers of docs/environment.md, as PlanLaunch stacks them: each row sets a variable
// in some layers and names the layer that must win.
TEST(Environment, MpiRanksYieldOnlyWithLessThanACpuEach) {
  ClusterView cluster = TwoWorkers();
  JobSpec spec = Spec("mpi");
  spec.roles[0].resources.cpus = 0.5;
  EnvMap env = FindFramework("mpi")->TaskEnvironment(spec, cluster, cluster.tasks[1]);
  EXPECT_EQ(env["OMPI_MCA_mpi_yield_when_idle"], "1");
  spec.roles[0].resources.cpus = 2;
  spec.roles[0].nproc_per_node = 3;
  env = FindFramework("mpi")->TaskEnvironment(spec, cluster, cluster.tasks[1]);
  EXPECT_EQ(env["OMPI_MCA_mpi_yield_when_idle"], "1") << "3 ranks on 2 CPUs";
  spec.roles[0].resources.cpus = 2;
  spec.roles[0].nproc_per_node = 2;
  env = FindFramework("mpi")->TaskEnvironment(spec, cluster, cluster.tasks[1]);
  EXPECT_EQ(env.count("OMPI_MCA_mpi_yield_when_idle"), 0u) << "a CPU per rank: busy-polling is fastest";
}

TEST(Framework, NprocPerNodeIsRefusedWhereATaskRunsOneProcess) {
  for (const std::string name : {"tensorflow", "xgboost", "mxnet", "shoal-train"}) {
    JobSpec spec = Spec(name);
    spec.roles[0].nproc_per_node = 2;
    auto issues = FindFramework(name)->Validate(spec);
    ASSERT_EQ(issues.size(), 1u) << name;
    EXPECT_EQ(issues[0].field, "roles.worker.nproc_per_node");
    EXPECT_NE(issues[0].problem.find(name + " runs one process per task"), std::string::npos) << issues[0].problem;
    EXPECT_NE(issues[0].fix.find("instances: 4"), std::string::npos) << issues[0].fix;
    spec.roles[0].nproc_per_node = 1;
    EXPECT_TRUE(FindFramework(name)->Validate(spec).empty()) << name;
  }
  for (const std::string name : {"generic", "pytorch", "mpi"}) {
    JobSpec spec = Spec(name);
    spec.roles[0].nproc_per_node = 2;
    EXPECT_TRUE(FindFramework(name)->Validate(spec).empty()) << name;
  }
}

TEST(LaunchPlan, EnvironmentPrecedence) {
  struct Row {
    const char* variable;
    bool in_job, in_role;
    const char* winner;  // "job", "role", or "shoal" (Shoal's or the framework's own value)
  };
  const Row rows[] = {
      {"ONLY_JOB", true, false, "job"},
      {"BOTH", true, true, "role"},
      {"ONLY_ROLE", false, true, "role"},
      {"RANK", true, true, "shoal"},
      {"SHOAL_JOB_ID", true, false, "shoal"},
      {"CUDA_VISIBLE_DEVICES", false, true, "shoal"},
      {"MASTER_PORT", true, true, "shoal"},
  };
  JobSpec spec = Spec("pytorch");
  for (const Row& row : rows) {
    if (row.in_job) spec.env[row.variable] = "job";
    if (row.in_role) spec.roles[0].env[row.variable] = "role";
  }
  ClusterView cluster = TwoWorkers();
  for (auto& task : cluster.tasks) task.processes = 2;
  LaunchContext context{250, false, Json::array({Json{{"name", "train"}}}), Json::array()};
  protocol::LaunchPlan plan = PlanLaunch(spec, *FindFramework("pytorch"), cluster, cluster.tasks[1], context);
  for (const Row& row : rows) {
    std::string expected = row.winner;
    const std::string& got = plan.env[row.variable];
    if (expected == "shoal") {
      EXPECT_NE(got, "job") << row.variable;
      EXPECT_NE(got, "role") << row.variable;
      EXPECT_FALSE(got.empty() && std::string(row.variable) != "CUDA_VISIBLE_DEVICES") << row.variable;
    } else {
      EXPECT_EQ(got, expected) << row.variable;
    }
  }
  EXPECT_EQ(plan.env["CUDA_VISIBLE_DEVICES"], "1,3");
  ASSERT_EQ(plan.processes.size(), 2u) << "one entry per local process";
  EXPECT_EQ(plan.processes[1].at("LOCAL_RANK"), "1");
  EXPECT_EQ(plan.processes[1].at("RANK"), "3") << "task 1's second process: 2 processes before it, then 1";
  EXPECT_EQ(plan.command, "true");
  EXPECT_EQ(plan.heartbeat_ms, 250);
  EXPECT_FALSE(plan.board_command.has_value());
  EXPECT_EQ(plan.inputs, context.inputs);
}

TEST(LaunchPlan, SecretsAreMaskedAndMpiJobsWaitForTheirOrted) {
  JobSpec spec = Spec("mpi");
  spec.env["API_KEY"] = "s3cret-value";
  spec.secrets.insert("API_KEY");
  ClusterView cluster = TwoWorkers();
  protocol::LaunchPlan plan = PlanLaunch(spec, *FindFramework("mpi"), cluster, cluster.tasks[0], LaunchContext{});
  EXPECT_TRUE(plan.mpi);
  EXPECT_EQ(plan.mask, std::vector<std::string>{"s3cret-value"});
  EXPECT_EQ(plan.env["API_KEY"], "s3cret-value") << "the program gets the real value";
}

TEST(Registry, KnowsItsFrameworks) {
  EXPECT_EQ(KnownFrameworks(), (std::vector<std::string>{"generic", "pytorch", "tensorflow", "mxnet", "xgboost", "mpi", "shoal-train"}));
  EXPECT_EQ(FindFramework("caffe2"), nullptr);
}

}  // namespace
}  // namespace shoal
