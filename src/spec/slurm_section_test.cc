#include "spec/slurm_section.h"

#include <gtest/gtest.h>

#include "spec/job_spec.h"
#include "spec/spec_document.h"
#include "spec/spec_parser.h"

namespace shoal {
namespace {

std::string Problems(const SlurmSection& section) {
  std::string out;
  for (const SpecIssue& issue : CheckSlurmSection(section)) out += issue.field + ": " + issue.problem + "; ";
  return out;
}

TEST(SlurmSection, EachFieldIsOneSbatchOptionAndTimeIsWholeMinutes) {
  SlurmSection section;
  section.partition = "gpu";
  section.account = "ml";
  section.time_ms = 90'500;  // 1.5 min and a bit: 2 minutes
  section.extra = {"--mail-type=END", "--exclusive"};
  auto options = section.Options();
  ASSERT_EQ(options.size(), 5u);
  EXPECT_EQ(options[0], (std::pair<std::string, std::string>{"slurm.partition", "--partition=gpu"}));
  EXPECT_EQ(options[1].second, "--account=ml");
  EXPECT_EQ(options[2], (std::pair<std::string, std::string>{"slurm.time", "--time=2"}));
  EXPECT_EQ(options[4], (std::pair<std::string, std::string>{"slurm.extra[1]", "--exclusive"}));
  EXPECT_EQ(Problems(section), "");
  EXPECT_TRUE(SlurmSection{}.empty());
}

TEST(SlurmSection, RefusesWhatWouldBreakTheBatchScriptOrWhatShoalSets) {
  SlurmSection section;
  section.partition = "gpu\necho pwned";
  section.extra = {"-N 2", "--output=/tmp/x", "--account=ml", "--time=5", "--nice=10", "--mail-user=a b"};
  std::string problems = Problems(section);
  EXPECT_NE(problems.find("slurm.partition: holds a space or a character that is not printable"), std::string::npos)
      << problems;
  EXPECT_NE(problems.find("slurm.extra[0]: '-N 2' is not one sbatch long option"), std::string::npos) << problems;
  EXPECT_NE(problems.find("slurm.extra[1]: --output is Shoal's to set"), std::string::npos) << problems;
  EXPECT_NE(problems.find("slurm.extra[2]: --account has a field of its own"), std::string::npos) << problems;
  EXPECT_NE(problems.find("slurm.extra[3]: --time has a field of its own"), std::string::npos) << problems;
  EXPECT_EQ(problems.find("slurm.extra[4]"), std::string::npos) << "--nice is the user's: " << problems;
  EXPECT_NE(problems.find("slurm.extra[5]"), std::string::npos) << problems;
}

TEST(SlurmSection, OptionNamesReadShortFormsAsLong) {
  EXPECT_EQ(SlurmOptionName("--account=ml"), "--account");
  EXPECT_EQ(SlurmOptionName("-A ml"), "--account");
  EXPECT_EQ(SlurmOptionName("-pgpu"), "--partition");
  EXPECT_EQ(SlurmOptionName("--exclusive"), "--exclusive");
}

TEST(SlurmSection, IsReadFromTheSpecAndKeptWithTheJob) {
  ParseOptions options;
  auto parsed = ParseJobSpec(R"(
slurm:
  partition: gpu
  qos: high
  time: 2h
  extra: [--exclusive]
roles: {worker: {command: 'true'}}
)", options);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const SlurmSection& slurm = parsed->spec.slurm;
  EXPECT_EQ(slurm.partition, "gpu");
  EXPECT_EQ(slurm.qos, "high");
  EXPECT_EQ(slurm.time_ms, 7'200'000);
  EXPECT_EQ(slurm.extra, std::vector<std::string>{"--exclusive"});
  EXPECT_EQ(JobSpecFromJson(ToJson(parsed->spec)).slurm.time_ms, 7'200'000) << "stored with the job";
  Json document = SpecDocument(parsed->spec);
  EXPECT_EQ(document["slurm"]["time"], "2h") << document.dump();
  EXPECT_EQ(JobSpecFromDocument(document).slurm.partition, "gpu");

  auto bad = ParseJobSpec("slurm: {partiton: gpu, extra: --exclusive}\nroles: {worker: {command: 'true'}}", options);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("slurm.partiton"), std::string::npos) << bad.status().message();
  EXPECT_NE(bad.status().message().find("partition"), std::string::npos);
  EXPECT_NE(bad.status().message().find("slurm.extra: must be a list"), std::string::npos) << bad.status().message();
}

}  // namespace
}  // namespace shoal
