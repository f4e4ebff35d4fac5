#include <gtest/gtest.h>

#include "protocol/api_messages.h"
#include "protocol/attempt_messages.h"
#include "protocol/job_views.h"
#include "protocol/task_messages.h"

namespace shoal::protocol {
namespace {

// Encodes, decodes and encodes again: both encodings must be equal.
template <typename T>
void ExpectRoundTrip(const T& message) {
  Json first = Encode(message);
  Result<T> decoded = Decode<T>(first);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString() << " for " << first.dump();
  EXPECT_EQ(Encode(*decoded), first);
}

TEST(ProtocolTest, EveryAgentMessageRoundTrips) {
  ExpectRoundTrip(RegisterRequest{{"worker", 3}, "10.0.0.2", {4000, 4001}, std::vector<int>{1}, 77});
  ExpectRoundTrip(RegisterRequest{{"ps", 0}, "h", {5}, std::nullopt, 0});
  LaunchPlan plan;
  plan.command = "python3 train.py";
  plan.workdir = "/w";
  plan.env = {{"A", "1"}, {"RANK", "2"}};
  plan.processes = {{{"LOCAL_RANK", "0"}}, {{"LOCAL_RANK", "1"}}};
  plan.board_command = "tensorboard";
  plan.mpi = true;
  plan.files = {"/a/b.txt"};
  plan.archives = {ArchiveSpec{"/a/env.tgz", "env", {{"PATH", {"bin"}}}}};
  plan.inputs = Json::array({Json{{"name", "train"}}});
  plan.mask = {"s3cret"};
  ExpectRoundTrip(plan);
  ExpectRoundTrip(ClusterReply{true, plan});
  ExpectRoundTrip(ClusterReply{false, {}});
  ExpectRoundTrip(StartedRequest{{"worker", 0}, 42, "http://h:1/"});
  HeartbeatRequest beat{{"worker", 1}, 0.5, ResourceSample{1000, 12.5, 4096, 0.5, 30.0, 1e9}, {}, 2.5, true, {}};
  beat.metrics.push_back(MetricPoint{1000, 7, "loss", 0.25});
  beat.saved_models.push_back(SavedModelUpdate{"20261201-120000", SaveState::kSaved, "s3://b/m", ""});
  ExpectRoundTrip(beat);
  beat.sample->rss_peak = 8192;  // a confined task's cgroup peak
  ExpectRoundTrip(beat);
  ExpectRoundTrip(HeartbeatReply{false, 9, {"x"}});
  ExpectRoundTrip(HeartbeatReply{false, std::nullopt, {}, PreemptNotice{"for job-2", 30'000}});
  ExpectRoundTrip(StacksAnswer{{"worker", 0}, 9, "Thread 1"});
  ExpectRoundTrip(ExitRequest{{"worker", 0}, {0, 9}, "killed"});
  ExpectRoundTrip(ExitRequest{{"worker", 1}, {0, 0}, "", /*terminated=*/true});
  ExpectRoundTrip(MpiCommandReply{true, "orted -x"});
}

TEST(ProtocolTest, EveryServerMessageRoundTrips) {
  TaskView task;
  task.role = "worker";
  task.index = 1;
  task.rank = 1;
  task.state = TaskState::kLost;
  task.ports = {1, 2};
  task.message = "no heartbeat";
  AttemptReport report;
  report.tasks = {task};
  report.state = AttemptState::kFailed;
  report.message = "task worker[1] was lost";
  report.am_addr = "127.0.0.1:9";
  report.final = true;
  report.version = 12;
  report.board_url = "";
  report.saved_models = {SavedModelUpdate{"n", SaveState::kFailed, "", "disk full"}};
  ExpectRoundTrip(report);
  ExpectRoundTrip(ReportReply{{SaveRequest{"n", 5}}});
  ExpectRoundTrip(ReportReply{{}, true, PreemptNotice{"for job-9", 5'000}});
  ExpectRoundTrip(StackReply{{StackEntry{"worker[0]", "h", true, "stack"}}});
  JobSpec spec;
  spec.name = "j";
  spec.roles.push_back(RoleSpec{});
  spec.roles.back().name = "worker";
  ExpectRoundTrip(AttemptFetchReply{spec, {{0}, {1}}});
}

struct Refusal {
  const char* json;
  const char* names;  // what the error must name
};

TEST(ProtocolTest, RefusalsNameTheField) {
  const Refusal heartbeats[] = {
      {R"([])", "heartbeat must be a JSON object"},
      {R"({"index": 0})", "heartbeat.role is missing"},
      {R"({"role": "w"})", "heartbeat.index is missing"},
      {R"({"role": "w", "index": -1})", "heartbeat.index must be an integer"},
      {R"({"role": "w", "index": 1.5})", "heartbeat.index must be an integer"},
      {R"({"role": "w", "index": 0, "progress": "x"})", "heartbeat.progress must be a number"},
      {R"({"role": "w", "index": 0, "sample": {"t": 1, "cpu": 1, "rss": -1}})", "heartbeat.sample"},
      {R"({"role": "w", "index": 0, "metrics": [{"t": 1, "value": 1}]})", "heartbeat.metrics[0]"},
      {R"({"role": "w", "index": 0, "saved_models": [{"name": "a", "state": "gone"}]})",
       "heartbeat.saved_models[0].state must be one of requested, uploading, saved, failed"},
      {R"({"role": "w", "index": 0, "uploading": 1})", "heartbeat.uploading must be true or false"},
  };
  for (const Refusal& c : heartbeats) {
    auto decoded = Decode<HeartbeatRequest>(Json::parse(c.json));
    ASSERT_FALSE(decoded.ok()) << c.json;
    EXPECT_EQ(decoded.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(decoded.status().message().find(c.names), std::string::npos) << decoded.status().message();
  }
  auto reg = Decode<RegisterRequest>(Json::parse(R"({"role": "w", "index": 0, "ports": []})"));
  ASSERT_FALSE(reg.ok());
  EXPECT_NE(reg.status().message().find("register.ports must list at least one port"), std::string::npos);
  auto report = Decode<AttemptReport>(Json::parse(R"({"tasks": [{"role": "w", "index": 0, "state": "DANCING"}]})"));
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.status().message().find("report.tasks[0].state must be one of PENDING"), std::string::npos)
      << report.status().message();
  auto plan = Decode<ClusterReply>(Json::parse(R"({"ready": true, "command": "x", "env": {"A": 1}})"));
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("launch plan.env.A must be a string"), std::string::npos)
      << plan.status().message();
}

TEST(ProtocolTest, JobViewsRoundTripAndRefuseByField) {
  JobDetail detail;
  detail.summary = {.id = "job-7", .name = "ddp", .user = "ann", .framework = "pytorch", .state = JobState::kRunning,
                    .progress = 0.25, .attempt = 2, .max_attempts = 3, .tasks = 2, .created_ms = 5, .started_ms = 6};
  detail.spec.name = "ddp";
  detail.spec.framework = "pytorch";
  detail.spec.roles.push_back(RoleSpec{.name = "worker", .instances = 2, .command = "python3 train.py"});
  detail.version = 9;
  AttemptView attempt{.number = 2, .state = AttemptState::kRunning, .dir = "/h/jobs/job-7/attempt-2", .task_gpus = {{0}, {1}}};
  attempt.tasks.push_back(TaskView{.role = "worker", .index = 1, .rank = 1, .state = TaskState::kRunning, .ports = {4000}});
  attempt.saved_models.push_back({.name = "20260101-000000", .requested_ms = 5, .state = SaveState::kSaved, .uri = "file:///m"});
  detail.attempts.push_back(attempt);
  detail.saved_models.push_back({.name = "20260101-000000", .state = SaveState::kSaved, .uri = "file:///m", .attempt = 2});
  ExpectRoundTrip(detail);
  ExpectRoundTrip(detail.summary);
  ExpectRoundTrip(JobList{.jobs = {detail.summary}, .total = 40, .limit = 1, .offset = 3});
  EXPECT_FALSE(Encode(attempt.saved_models[0]).contains("message")) << "unset texts are left out, as the web UI expects";

  const Refusal refusals[] = {
      {R"({"name": "x"})", "job.id is missing"},
      {R"({"id": "job-1", "state": "LOST"})", "job.state must be one of QUEUED"},
      {R"({"id": "job-1", "spec": {}, "attempts": [{"state": "RUNNING", "tasks": [{"role": "w"}]}]})",
       "job.attempts[0].tasks[0].index is missing"},
      {R"({"id": "job-1", "spec": {}, "saved_models": [{"name": "a", "state": "lost"}]})", "job.saved_models[0].state"},
      {R"({"id": "job-1"})", "job.spec is missing"},
  };
  for (const Refusal& c : refusals) {
    auto decoded = Decode<JobDetail>(Json::parse(c.json));
    ASSERT_FALSE(decoded.ok()) << c.json;
    EXPECT_NE(decoded.status().message().find(c.names), std::string::npos) << decoded.status().message();
  }
  auto list = Decode<JobList>(Json::parse(R"({"jobs": [{"id": "job-1", "progress": 2}]})"));
  ASSERT_FALSE(list.ok());
  EXPECT_NE(list.status().message().find("list.jobs[0].progress"), std::string::npos) << list.status().message();
}

TEST(ProtocolTest, SubmitRequestsTakeTextOrAnObject) {
  ExpectRoundTrip(SubmitRequest{"roles: {w: {command: 'true'}}", {"roles.w.instances=2"}, "job.yaml", "/d", "n", "ann"});
  auto object = Decode<SubmitRequest>(Json::parse(R"({"spec": {"roles": {"w": {"command": "true"}}}})"));
  ASSERT_TRUE(object.ok());
  EXPECT_EQ(Json::parse(object->spec)["roles"]["w"]["command"], "true");
  EXPECT_EQ(object->source_name, "job spec") << "defaults";
  const Refusal refusals[] = {{R"({})", "submit.spec is missing"},
                              {R"({"spec": 3})", "submit.spec must be the job spec"},
                              {R"({"spec": "x", "overrides": "not a list"})", "submit.overrides must be a list of strings"},
                              {R"({"spec": "x", "user": 7})", "submit.user must be a string"}};
  for (const Refusal& c : refusals) {
    auto decoded = Decode<SubmitRequest>(Json::parse(c.json));
    ASSERT_FALSE(decoded.ok()) << c.json;
    EXPECT_NE(decoded.status().message().find(c.names), std::string::npos) << decoded.status().message();
  }
}

TEST(ProtocolTest, WaitQueriesAreWholeNumbers) {
  auto q = DecodeWaitQuery("worker", "3", "250");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->task, (TaskId{"worker", 3}));
  EXPECT_EQ(q->wait_ms, 250);
  EXPECT_EQ(EncodeQuery(*q), "?role=worker&index=3&wait_ms=250");
  for (auto [role, index, wait] : {std::tuple{"", "0", ""}, {"w", "-1", ""}, {"w", "x", ""}, {"w", "0", "99999"},
                                   {"w", "99999999999", ""}}) {
    EXPECT_FALSE(DecodeWaitQuery(role, index, wait).ok()) << role << " " << index << " " << wait;
  }
  EXPECT_EQ(DecodeWaitQuery("w", "0", "")->wait_ms, 5000) << "absent: the default";
}

TEST(ProtocolTest, StateNamesHaveOneTable) {
  for (TaskState s : {TaskState::kPending, TaskState::kRunning, TaskState::kLost}) EXPECT_EQ(Parse<TaskState>(Name(s)), s);
  EXPECT_EQ(Parse<InputMode>("stream"), InputMode::kStream);
  EXPECT_EQ(Parse<InputMode>("Stream"), std::nullopt);
  EXPECT_EQ(Parse<SaveState>(Name(SaveState::kUploading)), SaveState::kUploading);
  EXPECT_STREQ(NameList<AttemptState>(), "STARTING, RUNNING, SUCCEEDED, FAILED, KILLED, PREEMPTED");
}

}  // namespace
}  // namespace shoal::protocol
