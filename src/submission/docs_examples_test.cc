// The YAML examples of the README and docs/ are read by the parsers a user's file meets:
// a queues file (a block with `queues:`) by the server's queue configuration, anything
// else as a job spec (a fragment without `roles:` gets one role, as a user would add it),
// then by its framework's checks. An example that drifts from the schema fails here, with
// the document and line it starts on. Files and buckets an example names are placeholders,
// so the submission's checks of them (submission_check_test.cc) are not run.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/framework.h"
#include "scheduling/queue_config.h"
#include "spec/spec_parser.h"

namespace shoal {
namespace {

struct YamlExample {
  std::string document;  // "docs/job-spec.md"
  int first_line = 0;    // the block's first line in it
  std::string text;

  // The block where it stands in its document, after blank lines, so that an error's
  // line number is the document's.
  std::string InPlace() const { return std::string(first_line - 1, '\n') + text; }
  std::string Origin() const { return document + ":" + std::to_string(first_line); }
};

std::vector<std::string> Documents() {
  std::vector<std::string> documents = {"README.md"};
  for (const auto& entry : std::filesystem::directory_iterator(std::string(SHOAL_SOURCE_ROOT) + "/docs")) {
    if (entry.path().extension() == ".md") documents.push_back("docs/" + entry.path().filename().string());
  }
  return documents;
}

std::vector<YamlExample> YamlExamples() {
  std::vector<YamlExample> examples;
  for (const std::string& document : Documents()) {
    std::ifstream in(std::string(SHOAL_SOURCE_ROOT) + "/" + document);
    EXPECT_TRUE(in.good()) << document;
    std::string line;
    int number = 0;
    YamlExample* open = nullptr;
    while (std::getline(in, line)) {
      ++number;
      if (open == nullptr && line == "```yaml") {
        examples.push_back({document, number + 1, ""});
        open = &examples.back();
      } else if (open != nullptr && line.starts_with("```")) {
        open = nullptr;
      } else if (open != nullptr) {
        open->text += line + "\n";
      }
    }
    EXPECT_EQ(open, nullptr) << document << ": a ```yaml block is never closed";
  }
  return examples;
}

bool HasTopLevelKey(const std::string& text, const std::string& key) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.starts_with(key + ":")) return true;
  }
  return false;
}

Status CheckJobSpecExample(const YamlExample& example) {
  ParseOptions options;
  options.source_name = example.document;
  options.base_dir = SHOAL_SOURCE_ROOT;
  options.known_frameworks = KnownFrameworks();
  std::string text = example.InPlace();
  if (!HasTopLevelKey(text, "roles")) text += "roles:\n  worker: {command: \"true\"}\n";
  ASSIGN_OR_RETURN(ParsedSpec parsed, ParseJobSpec(text, options));
  const FrameworkAdapter* framework = FindFramework(parsed.spec.framework);
  if (framework == nullptr) return InvalidArgument(example.Origin() + ": no framework '" + parsed.spec.framework + "'");
  return FormatIssues(framework->Validate(parsed.spec), parsed.sources);
}

TEST(DocsExamples, EveryYamlExampleIsAcceptedByTheParserItIsWrittenFor) {
  std::vector<YamlExample> examples = YamlExamples();
  int queue_files = 0;
  int job_specs = 0;
  for (const YamlExample& example : examples) {
    SCOPED_TRACE(example.Origin());
    if (HasTopLevelKey(example.text, "queues")) {
      ++queue_files;
      auto config = ParseQueueConfig(example.InPlace(), example.document);
      EXPECT_TRUE(config.ok()) << config.status().ToString() << "\n" << example.text;
    } else {
      ++job_specs;
      Status checked = CheckJobSpecExample(example);
      EXPECT_TRUE(checked.ok()) << checked.ToString() << "\n" << example.text;
    }
  }
  // What the documents held when this test was written: the extraction cannot quietly
  // find nothing.
  EXPECT_GE(queue_files, 1);
  EXPECT_GE(job_specs, 12);
}

TEST(DocsExamples, AnExampleThatDriftsFromTheSchemaIsRefusedWithItsPlace) {
  Status checked = CheckJobSpecExample({"docs/example.md", 7, "name: drift\nroles:\n  worker: {instance: 2, command: \"true\"}\n"});
  ASSERT_FALSE(checked.ok());
  EXPECT_NE(checked.message().find("docs/example.md:9"), std::string::npos) << checked.ToString();
  EXPECT_NE(checked.message().find("instances"), std::string::npos) << checked.ToString();
}

}  // namespace
}  // namespace shoal
