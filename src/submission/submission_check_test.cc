#include "submission/submission_check.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "submission/launch_limits.h"
#include "testing/scratch_directory.h"

namespace shoal {
namespace {

ParsedSpec Parse(const std::string& text) {
  ParseOptions options;
  options.source_name = "job.yaml";
  options.base_dir = "/tmp";
  auto parsed = ParseJobSpec(text, options);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  return parsed.ok() ? *parsed : ParsedSpec{};
}

const ClusterCapacity kCapacity{{64, 256LL << 30, 0}, {64, 256LL << 30, 0}};

std::string Fields(const std::vector<SpecIssue>& issues) {
  std::string out;
  for (const auto& issue : issues) out += issue.field + ": " + issue.problem + "\n";
  return out;
}

TEST(CheckLaunchLimits, RefusesWhatTheKernelWouldNotPassNamingTheLimit) {
  ArgumentLimits limits{4096, 16384 + kShoalReserveBytes};
  JobSpec spec = Parse("roles: {w: {command: a}}").spec;
  EXPECT_TRUE(CheckLaunchLimits(spec, limits).empty());

  spec.roles[0].command = std::string(4096 - kShoalWrapperBytes - 1, 'x');
  EXPECT_TRUE(CheckLaunchLimits(spec, limits).empty()) << "exactly what fits beside Shoal's wrapper";
  spec.roles[0].command += "x";
  auto command = CheckLaunchLimits(spec, limits);
  ASSERT_EQ(command.size(), 1u) << Fields(command);
  EXPECT_EQ(command[0].field, "roles.w.command");
  EXPECT_NE(command[0].problem.find("MAX_ARG_STRLEN"), std::string::npos) << command[0].problem;

  spec.roles[0].command = "a";
  spec.env["BIG"] = std::string(4096, 'v');
  auto variable = CheckLaunchLimits(spec, limits);
  ASSERT_EQ(variable.size(), 1u) << Fields(variable);
  EXPECT_EQ(variable[0].field, "env.BIG");

  spec.env.clear();
  for (int i = 0; i < 8; ++i) spec.roles[0].env["V" + std::to_string(i)] = std::string(3000, 'v');
  auto total = CheckLaunchLimits(spec, limits);
  ASSERT_EQ(total.size(), 1u) << Fields(total);
  EXPECT_EQ(total[0].field, "roles.w");
  EXPECT_NE(total[0].problem.find("ARG_MAX"), std::string::npos) << total[0].problem;
}

TEST(CheckLaunchLimits, ThisMachinesLimitsAreTheKernels) {
  ArgumentLimits limits = ArgumentLimits::OfThisMachine();
  EXPECT_GE(limits.max_argument_bytes, 131072u);
  EXPECT_GE(limits.max_total_bytes, limits.max_argument_bytes);
}

TEST(CheckSubmission, RefusesALocalOutputThatIsTheRootTheHomeOrAboveIt) {
  const std::string home = "/tmp/shoal-submission-test-home/.shoal";
  for (const char* uri : {"/", "file:///", "/tmp/shoal-submission-test-home", "/tmp/shoal-submission-test-home/.shoal/",
                          "file:///tmp", "/tmp/shoal-submission-test-home/x/.."}) {
    ParsedSpec parsed = Parse(std::string("outputs: [{name: model, uri: '") + uri + "'}]\nroles: {w: {command: a}}\n");
    Status status = CheckSubmission(parsed, kCapacity, home);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << uri;
    EXPECT_NE(status.message().find("outputs[0].uri: '"), std::string::npos) << status.message();
  }
  for (const char* uri : {"/tmp/shoal-submission-test-home/.shoal-out", "/tmp/elsewhere/model"}) {
    ParsedSpec parsed = Parse(std::string("outputs: [{name: model, uri: '") + uri + "'}]\nroles: {w: {command: a}}\n");
    Status status = CheckSubmission(parsed, kCapacity, home);
    EXPECT_EQ(status.message().find("outputs[0].uri"), std::string::npos) << uri << ": " << status.message();
  }
}

TEST(CheckSubmission, RefusesACheckpointFolderInTheHomeOrOneThatCannotBeWritten) {
  const std::string home = "/tmp/shoal-submission-test-home/.shoal";
  ParsedSpec in_home = Parse("checkpoint: {uri: " + home + "}\nroles: {w: {command: a}}\n");
  Status status = CheckSubmission(in_home, kCapacity, home);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("checkpoint.uri: '" + home + "' is the server's home"), std::string::npos)
      << status.message();
  ParsedSpec role = Parse("roles: {w: {command: a, checkpoint: {uri: /}}}\n");
  status = CheckSubmission(role, kCapacity, home);
  EXPECT_NE(status.message().find("roles.w.checkpoint.uri: '/' is the root folder"), std::string::npos)
      << status.message();
  // /proc takes no new file, whoever asks.
  ParsedSpec unwritable = Parse("checkpoint: {uri: /proc/shoal-checkpoints}\nroles: {w: {command: a}}\n");
  status = CheckSubmission(unwritable, kCapacity, home);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("checkpoint.uri: cannot write to '/proc/shoal-checkpoints'"), std::string::npos)
      << status.message();
  testing_support::ScratchDirectory scratch("submission");
  const std::string checkpoints = scratch / "checkpoints";  // made by the check's probe
  ParsedSpec writable = Parse("checkpoint: {uri: " + checkpoints + "}\nroles: {w: {command: a}}\n");
  EXPECT_TRUE(CheckSubmission(writable, kCapacity, home).ok());
  EXPECT_TRUE(std::filesystem::is_empty(checkpoints)) << "the probe is deleted";
}

}  // namespace
}  // namespace shoal
