#include "spec/spec_document.h"

#include <gtest/gtest.h>

#include "spec/spec_parser.h"

namespace shoal {
namespace {

// Every field a spec can set, with values that are not the defaults, and roles that are
// not in alphabetical order (ranks follow the order the file gives).
constexpr const char* kEveryField = R"(name: every-field
framework: generic
cluster: local
workdir: /srv/jobs/w
max_attempts: 3
preemption_grace: 2m
checkpoint: {path: state, uri: s3://bucket/ckpt, keep: 5}
env:
  PLAIN: "1"
  TOKEN: {secret: s3cr3t}
timeouts: {heartbeat: 2500ms, register: 90s, job: 2h, hang: 0, on_hang: fail}
roles:
  zeta:
    instances: 3
    cpus: 0.5
    memory: 1.5G
    gpus: 1
    command: [python3, "train file.py"]
    env: {KEY: {secret: k3y}, LEVEL: info}
    tolerate_failure: true
    nproc_per_node: 2
  alpha:
    memory: 1000000007
    command: sleep 1
    service: true
    checkpoint: {uri: /srv/ckpt/alpha}
files: [/srv/config.json]
archives:
  - {path: /srv/env.tar.gz, name: env, prepend: {PYTHONPATH: [lib, .]}}
inputs:
  - {name: train, uri: "s3://bucket/data/*.csv", path: data/train}
  - {name: feed, uri: /srv/feed, mode: stream, epochs: 2, shuffle: true, roles: [zeta]}
  - {name: hint, uri: "file:///srv/hint", mode: placeholder}
outputs:
  - {name: model, uri: s3://bucket/out/model, from: "zeta[0]", on_failure: true}
  - {name: logs, path: logs/, uri: /srv/out/logs}
board: {command: "tensorboard --port $SHOAL_BOARD_PORT", role: zeta, index: 2}
)";

ParseOptions Options(const std::string& base_dir) {
  ParseOptions options;
  options.source_name = "job.yaml";
  options.base_dir = base_dir;
  return options;
}

JobSpec Parse(const std::string& text, const std::string& base_dir = "/srv/jobs") {
  auto parsed = ParseJobSpec(text, Options(base_dir));
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  return parsed.ok() ? parsed->spec : JobSpec{};
}

TEST(SpecDocument, SubmittedAgainGivesTheSameJob) {
  JobSpec spec = Parse(kEveryField);
  ASSERT_EQ(spec.roles.size(), 2u);
  Json document = SpecDocument(spec);
  // Read from another folder: nothing in the document depends on where it was written.
  JobSpec again = Parse(document.dump(), "/elsewhere");
  EXPECT_EQ(ToJson(again), ToJson(spec)) << document.dump(2);
}

TEST(SpecDocument, IsWrittenInTheSchemaUsersWrite) {
  Json document = SpecDocument(Parse(kEveryField));
  ASSERT_TRUE(document["roles"].is_array());
  EXPECT_EQ(document["roles"][0]["name"], "zeta") << "roles keep their order";
  EXPECT_EQ(document["roles"][1]["name"], "alpha");
  EXPECT_EQ(document["roles"][0]["memory"], "1536M");
  EXPECT_EQ(document["roles"][1]["memory"], "1000000007") << "a size no unit states exactly stays in bytes";
  EXPECT_EQ(document["timeouts"]["heartbeat"], "2500ms");
  EXPECT_EQ(document["timeouts"]["register"], "90s");
  EXPECT_EQ(document["timeouts"]["job"], "2h");
  EXPECT_EQ(document["timeouts"]["hang"], "0");
  EXPECT_EQ(document["env"]["TOKEN"], Json({{"secret", "s3cr3t"}}));
  EXPECT_FALSE(document.contains("secrets")) << "secrets are marked where they are set";
  EXPECT_FALSE(document.contains("user")) << "the submitter is whoever submits it";
  EXPECT_FALSE(IsInternalSpecJson(document));
  EXPECT_TRUE(IsInternalSpecJson(ToJson(Parse(kEveryField))));
}

TEST(SpecDocument, FromDocumentIsTheInverse) {
  JobSpec spec = Parse(kEveryField);
  EXPECT_EQ(ToJson(JobSpecFromDocument(SpecDocument(spec))), ToJson(spec));
  JobSpec minimal = Parse("roles: {w: {command: 'true'}}\n");
  EXPECT_EQ(ToJson(JobSpecFromDocument(SpecDocument(minimal))), ToJson(minimal));
}

TEST(SpecDocument, MaskedSecretsAreShownAndRefusedWhenSubmittedAsValues) {
  Json shown = MaskSecretValues(SpecDocument(Parse(kEveryField)));
  EXPECT_EQ(shown.dump().find("s3cr3t"), std::string::npos);
  EXPECT_EQ(shown.dump().find("k3y"), std::string::npos);
  EXPECT_EQ(shown["roles"][0]["env"]["LEVEL"], "info");
  auto refused = ParseJobSpec(shown.dump(), Options("/srv"));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("env.TOKEN: holds ********"), std::string::npos) << refused.status().message();
  EXPECT_NE(refused.status().message().find("roles.zeta.env.KEY"), std::string::npos) << refused.status().message();
  ParseOptions with_values = Options("/srv");
  with_values.overrides = {"env.TOKEN.secret:=new", "roles.zeta.env.KEY.secret:=other"};
  auto resubmitted = ParseJobSpec(shown.dump(), with_values);
  ASSERT_TRUE(resubmitted.ok()) << resubmitted.status().ToString();
  EXPECT_EQ(resubmitted->spec.env.at("TOKEN"), "new");
  EXPECT_EQ(resubmitted->spec.secrets, (std::set<std::string>{"KEY", "TOKEN"}));
}

TEST(ParseJobSpec, ReadsRolesAsAListInTheirOrder) {
  JobSpec spec = Parse("roles:\n  - {name: worker, instances: 2, command: a}\n  - {name: chief, command: b}\n");
  ASSERT_EQ(spec.roles.size(), 2u);
  EXPECT_EQ(spec.roles[0].name, "worker");
  EXPECT_EQ(spec.roles[0].instances, 2);
  EXPECT_EQ(spec.roles[1].name, "chief");
  ParseOptions flags = Options("/srv");
  flags.overrides = {"roles.chief.instances=4"};
  auto overridden = ParseJobSpec("roles: [{name: worker, command: a}, {name: chief, command: b}]", flags);
  ASSERT_TRUE(overridden.ok()) << overridden.status().ToString();
  EXPECT_EQ(overridden->spec.roles[1].instances, 4) << "flags name a listed role as they name a mapped one";
}

TEST(ParseJobSpec, RefusesAListedRoleWithoutANameOrGivenTwice) {
  struct Case {
    const char* text;
    const char* expected;
  };
  for (const Case& c : {Case{"roles:\n  - {name: w, command: a}\n  - {command: b}\n", "job.yaml:3: roles[1].name: a role in a list needs its name"},
                        Case{"roles:\n  - {name: w, command: a}\n  - {name: w, command: b}\n", "job.yaml:3: roles[1].name: 'w' is given twice"},
                        Case{"roles: [worker]\n", "roles[0].name: a role in a list needs its name"}}) {
    auto parsed = ParseJobSpec(c.text, Options("/srv"));
    ASSERT_FALSE(parsed.ok()) << c.text;
    EXPECT_NE(parsed.status().message().find(c.expected), std::string::npos) << parsed.status().message();
  }
}

}  // namespace
}  // namespace shoal
