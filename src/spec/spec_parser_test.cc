#include "spec/spec_parser.h"

#include <gtest/gtest.h>

#include "spec/spec_document.h"

namespace shoal {
namespace {

constexpr const char* kGood = R"(name: ddp
framework: pytorch
env:
  OMP_NUM_THREADS: 1
max_attempts: 2
timeouts:
  heartbeat: 10s
  hang: 5m
  on_hang: fail
roles:
  worker:
    instances: 2
    cpus: 1
    memory: 512M
    command: python3 train.py
    env: {A: b}
  ps:
    command: [python3, ps server.py]
)";

ParseOptions Options() {
  ParseOptions options;
  options.source_name = "job.yaml";
  options.base_dir = "/tmp/jobs";
  return options;
}

TEST(ParseJobSpec, ReadsEveryField) {
  auto parsed = ParseJobSpec(kGood, Options());
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const JobSpec& spec = parsed->spec;
  EXPECT_EQ(spec.name, "ddp");
  EXPECT_EQ(spec.framework, "pytorch");
  EXPECT_EQ(spec.env.at("OMP_NUM_THREADS"), "1");
  EXPECT_EQ(spec.max_attempts, 2);
  EXPECT_EQ(spec.timeouts.heartbeat_ms, 10'000);
  EXPECT_EQ(spec.timeouts.hang_ms, 300'000);
  EXPECT_TRUE(spec.timeouts.hang_fails);
  EXPECT_EQ(spec.workdir, "/tmp/jobs");
  ASSERT_EQ(spec.roles.size(), 2u);
  EXPECT_EQ(spec.roles[0].name, "worker");
  EXPECT_EQ(spec.roles[0].instances, 2);
  EXPECT_EQ(spec.roles[0].resources.memory_bytes, 512LL << 20);
  EXPECT_EQ(spec.roles[0].env.at("A"), "b");
  EXPECT_FALSE(spec.roles[0].service);
  EXPECT_EQ(spec.roles[1].name, "ps");
  EXPECT_TRUE(spec.roles[1].service) << "ps roles are services by default";
  EXPECT_EQ(spec.roles[1].command, "python3 'ps server.py'");
  EXPECT_EQ(spec.TotalTasks(), 3);
}

TEST(ParseJobSpec, QueuePriorityAndEstimate) {
  auto defaults = ParseJobSpec("roles: {w: {command: t}}", Options());
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->spec.queue, "default");
  EXPECT_EQ(defaults->spec.priority, 0);
  EXPECT_EQ(defaults->spec.estimate_ms, 0);
  for (auto [text, priority] : {std::pair{"low", -100}, {"normal", 0}, {"high", 100}, {"-1000", -1000}, {"42", 42}}) {
    auto parsed = ParseJobSpec(std::string("roles: {w: {command: t}}\nqueue: research\nestimate: 2h\npriority: ") + text,
                               Options());
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    EXPECT_EQ(parsed->spec.priority, priority) << text;
    EXPECT_EQ(parsed->spec.queue, "research");
    EXPECT_EQ(parsed->spec.estimate_ms, 2 * 3600 * 1000);
    JobSpec round = JobSpecFromDocument(SpecDocument(parsed->spec));
    EXPECT_EQ(round.queue, "research");
    EXPECT_EQ(round.priority, priority);
    EXPECT_EQ(round.estimate_ms, 2 * 3600 * 1000);
  }
}

TEST(ParseJobSpec, SecretVariablesAreReadAndMaskedInTheShownSpec) {
  auto parsed = ParseJobSpec("env: {TOKEN: {secret: s3cr3t}, PLAIN: p}\n"
                             "roles: {worker: {command: 'true', env: {KEY: {secret: k3y}}}}\n", Options());
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const JobSpec& spec = parsed->spec;
  EXPECT_EQ(spec.env.at("TOKEN"), "s3cr3t") << "the program gets the value";
  EXPECT_EQ(spec.secrets, (std::set<std::string>{"KEY", "TOKEN"}));
  EXPECT_EQ(SecretValues(spec), (std::vector<std::string>{"s3cr3t", "k3y"}));
  Json shown = MaskSecretValues(SpecDocument(spec));
  EXPECT_EQ(shown["env"]["TOKEN"], Json({{"secret", kSecretMask}}));
  EXPECT_EQ(shown["env"]["PLAIN"], "p");
  EXPECT_EQ(shown["roles"][0]["env"]["KEY"], Json({{"secret", kSecretMask}}));
  EXPECT_EQ(shown.dump().find("s3cr3t"), std::string::npos);
  EXPECT_EQ(JobSpecFromJson(ToJson(spec)).secrets, spec.secrets) << "kept through the job history";
  auto bad = ParseJobSpec("env: {TOKEN: {secrt: x}}\nroles: {worker: {command: 'true'}}\n", Options());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("{secret: VALUE}"), std::string::npos) << bad.status().message();
}

TEST(ParseJobSpec, JsonRoundTrip) {
  auto parsed = ParseJobSpec(kGood, Options());
  ASSERT_TRUE(parsed.ok());
  JobSpec back = JobSpecFromJson(ToJson(parsed->spec));
  EXPECT_EQ(ToJson(back), ToJson(parsed->spec));
  // JSON is YAML too: the API's bodies go through the same parser.
  auto again = ParseJobSpec(R"({"name": "j", "roles": {"worker": {"command": "true"}}})", Options());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->spec.roles[0].instances, 1);
}

TEST(ParseJobSpec, FlagsWinOverTheFile) {
  auto options = Options();
  options.overrides = {"roles.worker.instances=4", "name=other", "env.EXTRA=x y", "roles.chief.command=true"};
  auto parsed = ParseJobSpec(kGood, options);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->spec.roles[0].instances, 4);
  EXPECT_EQ(parsed->spec.name, "other");
  EXPECT_EQ(parsed->spec.env.at("EXTRA"), "x y");
  EXPECT_NE(parsed->spec.FindRole("chief"), nullptr);
}

TEST(ParseJobSpec, ErrorsNameFieldLineAndFix) {
  auto parsed = ParseJobSpec("name: x\nroles:\n  worker:\n    instances: 0\n    comand: true\n", Options());
  ASSERT_FALSE(parsed.ok());
  const std::string& message = parsed.status().message();
  EXPECT_NE(message.find("job.yaml:4: roles.worker.instances: must be between 1 and 10000"), std::string::npos)
      << message;
  EXPECT_NE(message.find("job.yaml:5: roles.worker.comand: unknown field; fix: did you mean 'command'?"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("roles.worker.command: is missing"), std::string::npos) << message;
}

TEST(ParseJobSpec, FlagErrorsPointAtTheFlag) {
  auto options = Options();
  options.overrides = {"roles.worker.memory=lots"};
  auto parsed = ParseJobSpec(kGood, options);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("flag --set roles.worker.memory"), std::string::npos)
      << parsed.status().message();
}

TEST(ParseJobSpec, ARoleOnlyAFlagNamesIsBlamedOnThatFlag) {
  auto options = Options();
  options.overrides = {"roles.ghost.env.A:=1"};  // --role-env ghost:A=1, for a role the spec lacks
  auto parsed = ParseJobSpec(kGood, options);
  ASSERT_FALSE(parsed.ok());
  const std::string& message = parsed.status().message();
  EXPECT_NE(message.find("flag --set roles.ghost.env.A: roles.ghost.command: is missing"), std::string::npos) << message;
  EXPECT_EQ(message.find("job.yaml:"), std::string::npos) << message;
}

TEST(ParseJobSpec, RefusesBadSpecsNamingTheLineAndField) {
  // Each bad spec and the start of its message: the file, the line and the field path.
  struct Case {
    const char* text;
    const char* where;
  } cases[] = {
      {"", "job.yaml: roles"},                                                        // no roles
      {"roles: []", "job.yaml:1: roles"},                                             // roles not a map
      {"name: x\nroles: {w: {instances: two, command: t}}", "job.yaml:2: roles.w.instances"},  // wrong type
      {"roles: {w: {instances: -1, command: t}}", "job.yaml:1: roles.w.instances"},   // negative
      {"roles: {w: {memory: 4X, command: t}}", "job.yaml:1: roles.w.memory"},         // malformed memory
      {"roles: {w: {cpus: 0, command: t}}", "job.yaml:1: roles.w.cpus"},              // zero cpus
      {"roles: {w: {instances: 1}}", "job.yaml:1: roles.w.command"},                  // no command
      {"roles: {w: {command: \"  \"}}", "job.yaml:1: roles.w.command"},               // blank command
      {"framework: tensorflw\nroles: {w: {command: t}}", "job.yaml:1: framework"},    // unknown framework
      {"colour: red\nroles: {w: {command: t}}", "job.yaml:1: colour"},                // unknown field
      {"roles: {w: {command: t, gpus: -2}}", "job.yaml:1: roles.w.gpus"},             // negative gpus
      {"roles: {w: {command: t, env: [a]}}", "job.yaml:1: roles.w.env"},              // env not a map
      {"roles: {w: {command: t}}\nmax_attempts: 0", "job.yaml:2: max_attempts"},      // zero attempts
      {"roles: {w: {command: t}}\ntimeouts: {heartbeat: soon}", "job.yaml:2: timeouts.heartbeat"},      // bad duration
      {"roles: {w: {command: t}}\ntimeouts: {heartbeat: 1500ms}", "job.yaml:2: timeouts.heartbeat"},    // shorter than two heartbeats
      {"roles: {w: {command: t}}\ntimeouts: {hartbeat: 1s}", "job.yaml:2: timeouts.hartbeat"},          // unknown timeout
      {"roles: {w: {command: t}}\ntimeouts: {on_hang: retry}", "job.yaml:2: timeouts.on_hang"},         // unknown hang action
      {"roles: {\"bad name!\": {command: t}}", "job.yaml:1: roles.bad name!"},        // bad role name
      {"name: \"../etc\"\nroles: {w: {command: t}}", "job.yaml:1: name"},             // bad job name
      {"roles: {w: {command: {a: b}}}", "job.yaml:1: roles.w.command"},               // command a map
      {"roles: {w: {command: t, service: maybe}}", "job.yaml:1: roles.w.service"},    // not a bool
      {"roles: {w: [1, 2]}", "job.yaml:1: roles.w"},                                  // role not a map
      {"- a\n- b", "job.yaml: (document): must be a mapping"},                        // document a list
      {"roles: {w: {command: t}\n", "job.yaml:2"},                                    // YAML syntax error
      {"roles: {w: {command: t, cpus: .nan}}", "job.yaml:1: roles.w.cpus"},           // not finite
      {"env: {1BAD: x}\nroles: {w: {command: t}}", "job.yaml:1: env.1BAD"},           // bad variable name
      {"roles: {w: {command: t}}\npriority: urgent", "job.yaml:2: priority"},         // unknown priority name
      {"roles: {w: {command: t}}\npriority: 1001", "job.yaml:2: priority"},           // out of range
      {"roles: {w: {command: t}}\npriority: 1.5", "job.yaml:2: priority"},            // not whole
      {"roles: {w: {command: t}}\nqueue: Research!", "job.yaml:2: queue"},            // bad queue name
      {"roles: {w: {command: t}}\nestimate: 0s", "job.yaml:2: estimate"},             // zero estimate
      {"roles: {w: {command: t}}\npreemption_grace: 2h", "job.yaml:2: preemption_grace"},      // past 1h
      {"roles: {w: {command: t}}\ncheckpoint: {path: c}", "job.yaml:2: checkpoint.uri"},       // no uri
      {"roles: {w: {command: t}}\ncheckpoint: {uri: /c, keep: 0}", "job.yaml:2: checkpoint.keep"},
      {"roles: {w: {command: t}}\ncheckpoint: {uri: '/c/*'}", "job.yaml:2: checkpoint.uri"},   // a glob
      {"roles: {w: {command: t}}\ncheckpoint: {uri: /c, path: ../up}", "job.yaml:2: checkpoint.path"},
      {"roles: {w: {command: t}}\ncheckpoint: {uri: /c, every: 5}", "job.yaml:2: checkpoint.every"},
      {"roles: {w: {command: t, checkpoint: [/c]}}", "job.yaml:1: roles.w.checkpoint"},
      {"roles: {w: {command: t}}\noutputs: [{name: m, uri: /o}]\ncheckpoint: {uri: /o/ckpt}",
       "checkpoint.uri: '/o/ckpt' overlaps outputs[0]"},
  };
  for (const Case& c : cases) {
    auto parsed = ParseJobSpec(c.text, Options());
    EXPECT_FALSE(parsed.ok()) << "accepted: " << c.text;
    if (!parsed.ok()) {
      EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << c.text;
      EXPECT_NE(parsed.status().message().find(c.where), std::string::npos)
          << c.text << "\n  wanted: " << c.where << "\n  got:    " << parsed.status().message();
    }
  }
}

TEST(ParseJobSpec, FrameworksKnowTheirRoles) {
  auto options = Options();
  options.known_frameworks = {"generic", "tensorflow", "mxnet"};
  auto tf = ParseJobSpec("framework: tensorflow\nroles:\n  ps: {instances: 2, command: t}\n  worker: {instances: 3, command: t}\n"
                         "  chief: {command: t}\n  evaluator: {command: t}\n", options);
  ASSERT_TRUE(tf.ok()) << tf.status().ToString();
  EXPECT_TRUE(tf->spec.FindRole("ps")->service);
  EXPECT_TRUE(tf->spec.FindRole("evaluator")->service);
  EXPECT_FALSE(tf->spec.FindRole("chief")->service);

  auto scheduler = ParseJobSpec("framework: tensorflow\nroles:\n  worker: {command: t}\n  scheduler: {command: t}\n", options);
  ASSERT_FALSE(scheduler.ok());
  EXPECT_NE(scheduler.status().message().find("job.yaml:4: roles.scheduler: tensorflow jobs have no role 'scheduler'"),
            std::string::npos) << scheduler.status().message();
  auto no_workers = ParseJobSpec("framework: tensorflow\nroles:\n  ps: {command: t}\n", options);
  ASSERT_FALSE(no_workers.ok());
  EXPECT_NE(no_workers.status().message().find("needs a 'worker' role"), std::string::npos);
  auto two_chiefs = ParseJobSpec("framework: tensorflow\nroles:\n  worker: {command: t}\n  chief: {instances: 2, command: t}\n", options);
  ASSERT_FALSE(two_chiefs.ok());
  EXPECT_NE(two_chiefs.status().message().find("at most 1 chief"), std::string::npos);

  auto mx = ParseJobSpec("framework: mxnet\nroles:\n  scheduler: {command: t}\n  server: {command: t}\n  worker: {command: t}\n", options);
  ASSERT_TRUE(mx.ok()) << mx.status().ToString();
  EXPECT_TRUE(mx->spec.FindRole("scheduler")->service);
  EXPECT_TRUE(mx->spec.FindRole("server")->service);
  auto explicit_service = ParseJobSpec("framework: tensorflow\nroles:\n  worker: {command: t}\n  evaluator: {command: t, service: false}\n", options);
  ASSERT_TRUE(explicit_service.ok());
  EXPECT_FALSE(explicit_service->spec.FindRole("evaluator")->service) << "an explicit setting wins";
}

TEST(ParseJobSpec, Board) {
  auto board = ParseJobSpec("roles: {worker: {instances: 2, command: t}}\nboard: {command: 'tb --port $SHOAL_BOARD_PORT', index: 1}",
                            Options());
  ASSERT_TRUE(board.ok()) << board.status().ToString();
  EXPECT_EQ(board->spec.board.role, "worker");
  EXPECT_EQ(board->spec.board.index, 1);
  EXPECT_EQ(JobSpecFromJson(ToJson(board->spec)).board.command, "tb --port $SHOAL_BOARD_PORT");
  for (const char* bad : {"roles: {worker: {command: t}}\nboard: {index: 0}",
                          "roles: {worker: {command: t}}\nboard: {command: tb, role: ps}",
                          "roles: {worker: {command: t}}\nboard: {command: tb, index: 3}",
                          "roles: {worker: {command: t}}\nboard: tb"}) {
    EXPECT_FALSE(ParseJobSpec(bad, Options()).ok()) << bad;
  }
}

TEST(EditDistance, Basics) {
  EXPECT_EQ(EditDistance("instances", "instances"), 0u);
  EXPECT_EQ(EditDistance("instnces", "instances"), 1u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
}

TEST(ParseJobSpec, ReadsInputsAndOutputs) {
  auto parsed = ParseJobSpec(R"(name: data
inputs:
  - {name: train, uri: "s3://bucket/data/*.csv"}
  - {name: feed, uri: data/, mode: stream, epochs: 2, shuffle: true, roles: [worker]}
outputs:
  - {name: model, path: model/, uri: s3://bucket/out, from: "worker[1]", on_failure: true}
roles:
  worker: {instances: 2, command: "true"}
)", Options());
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const JobSpec& spec = parsed->spec;
  ASSERT_EQ(spec.inputs.size(), 2u);
  EXPECT_EQ(spec.inputs[0].mode, InputMode::kDownload);
  EXPECT_EQ(spec.inputs[0].path, "train");
  EXPECT_EQ(spec.inputs[1].uri, "/tmp/jobs/data/") << "paths are made absolute";
  EXPECT_EQ(spec.inputs[1].epochs, 2);
  EXPECT_TRUE(spec.inputs[1].shuffle);
  ASSERT_EQ(spec.outputs.size(), 1u);
  EXPECT_EQ(spec.outputs[0].from, "worker[1]");
  EXPECT_TRUE(spec.outputs[0].on_failure);
  JobSpec back = JobSpecFromJson(ToJson(spec));
  EXPECT_EQ(ToJson(back), ToJson(spec));
}

TEST(ParseJobSpec, RefusesBadInputsAndOutputs) {
  auto parsed = ParseJobSpec(R"(name: data
inputs:
  - {name: train, uri: "hdfs://nn/data"}
  - {name: feed, uri: data/, mode: pipe}
  - {name: val, uri: data/, epochs: 2}
  - {uri: data/}
outputs:
  - {name: model, uri: "s3://bucket/out/*"}
  - {name: ckpt, uri: out, from: "worker[5]", path: /abs}
roles:
  worker: {instances: 2, command: "true"}
)", Options());
  ASSERT_FALSE(parsed.ok());
  const std::string& message = parsed.status().message();
  for (const char* expected : {"inputs[0].uri: unknown storage scheme 'hdfs://'", "inputs[1].mode: unknown mode 'pipe'",
                               "inputs[2]: epochs and shuffle apply to stream mode only", "inputs[3].name: is missing",
                               "outputs[0].uri: an output URI cannot hold glob characters",
                               "outputs[1].from: 'worker[5]' is not a task of this job",
                               "outputs[1].path: '/abs' must be a folder inside the task directory"}) {
    EXPECT_NE(message.find(expected), std::string::npos) << expected << "\n" << message;
  }
}

}  // namespace
}  // namespace shoal

namespace shoal {
namespace {

TEST(ParseJobSpec, ErrorsQuoteHostileBytesAsEscapes) {
  auto parsed = ParseJobSpec(std::string("name: \"a\\x01b\"\nroles: {w: {command: t}}\n"), Options());
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("a\\x01b"), std::string::npos) << parsed.status().message();
  auto latin1 = ParseJobSpec(std::string("name: \xff\xfe\nroles: {w: {command: t}}\n"), Options());
  ASSERT_FALSE(latin1.ok());
  EXPECT_NE(latin1.status().message().find("\\xff\\xfe"), std::string::npos) << latin1.status().message();
}

}  // namespace
}  // namespace shoal

namespace shoal {
namespace {

// The message of a refused spec, or "" when it was accepted.
std::string Refusal(const std::string& text, ParseOptions options = Options()) {
  auto parsed = ParseJobSpec(text, options);
  return parsed.ok() ? "" : parsed.status().message();
}

TEST(ParseJobSpec, RefusesAKeyGivenTwiceNamingItAndItsLines) {
  std::string roles = Refusal("roles:\n  w: {command: a}\n  w: {command: b}\n");
  EXPECT_NE(roles.find("job.yaml:3: roles.w: is given twice (first at line 2)"), std::string::npos) << roles;
  std::string instances = Refusal("roles:\n  w:\n    instances: 1\n    command: a\n    instances: 5\n");
  EXPECT_NE(instances.find("job.yaml:5: roles.w.instances: is given twice (first at line 3)"), std::string::npos)
      << instances;
  std::string json = Refusal(R"({"roles": {"w": {"command": "a"}}, "name": "x", "name": "y"})");
  EXPECT_NE(json.find("job.yaml:1: name: is given twice"), std::string::npos) << json;
  EXPECT_EQ(Refusal("roles: {w: {command: a}, v: {command: a}}\nenv: {A: 1}\n"), "") << "distinct keys are fine";
}

TEST(ParseJobSpec, RefusesASecondDocument) {
  std::string two = Refusal("roles: {w: {command: a}}\n---\nroles: {v: {command: b}}\n");
  EXPECT_NE(two.find("job.yaml:3: a second YAML document"), std::string::npos) << two;
  EXPECT_EQ(Refusal("---\nroles: {w: {command: a}}\n...\n"), "") << "one document with its markers is fine";
  EXPECT_EQ(Refusal("roles: {w: {command: a}}\n---\n"), "") << "a trailing separator holds no document";
}

TEST(ParseJobSpec, RefusesANulInAnyText) {
  std::string escaped = Refusal("roles: {w: {command: \"echo a\\0b\"}}\n");
  EXPECT_NE(escaped.find("roles.w.command: holds a NUL character"), std::string::npos) << escaped;
  std::string json = Refusal(R"({"roles": {"w": {"command": "true", "env": {"A": "x\u0000y"}}}})");
  EXPECT_NE(json.find("roles.w.env.A: holds a NUL character"), std::string::npos) << json;
  std::string key = Refusal("roles: {\"w\\0x\": {command: a}}\n");
  EXPECT_NE(key.find("holds a NUL character"), std::string::npos) << key;
  std::string raw = Refusal(std::string("roles: {w: {command: a}}\nname: 'a\0b'\n", 37));
  EXPECT_NE(raw.find("job.yaml:2: holds a NUL byte"), std::string::npos) << raw;
  ParseOptions flagged = Options();
  flagged.overrides = {std::string("roles.w.command:=echo a\0b", 25)};
  std::string flag = Refusal("roles: {w: {command: a}}\n", flagged);
  EXPECT_NE(flag.find("flag --set roles.w.command: roles.w.command: holds a NUL character"), std::string::npos) << flag;
}

TEST(ParseJobSpec, RefusesDataNamesWhoseVariablesCollide) {
  std::string inputs = Refusal("inputs:\n  - {name: train, uri: /data, mode: placeholder}\n"
                               "  - {name: TRAIN, uri: /data, mode: placeholder}\nroles: {w: {command: a}}\n");
  EXPECT_NE(inputs.find("job.yaml:3: inputs[1].name: 'TRAIN' and 'train' (inputs[0]) would both set SHOAL_INPUT_TRAIN"),
            std::string::npos) << inputs;
  std::string suffix = Refusal("inputs:\n  - {name: a, uri: /data, mode: download}\n"
                               "  - {name: a_dir, uri: /data, mode: placeholder}\nroles: {w: {command: a}}\n");
  EXPECT_NE(suffix.find("would both set SHOAL_INPUT_A_DIR"), std::string::npos) << suffix;
  std::string outputs = Refusal("outputs:\n  - {name: model, uri: /out/a}\n  - {name: Model, uri: /out/b}\n"
                                "roles: {w: {command: a}}\n");
  EXPECT_NE(outputs.find("outputs[1].name: 'Model' and 'model' (outputs[0]) would both set SHOAL_OUTPUT_MODEL_DIR"),
            std::string::npos) << outputs;
  EXPECT_EQ(Refusal("inputs:\n  - {name: a, uri: /data, mode: download}\n  - {name: a_dir, uri: /data, mode: download}\n"
                    "roles: {w: {command: a}}\n"), "") << "SHOAL_INPUT_A_DIR and SHOAL_INPUT_A_DIR_DIR differ";
}

TEST(ParseJobSpec, RefusesOutputsWhoseFoldersOverlap) {
  std::string same = Refusal("outputs:\n  - {name: model, uri: /out/m}\n  - {name: logs, uri: 'file:///out/m/'}\n"
                             "roles: {w: {command: a}}\n");
  EXPECT_NE(same.find("job.yaml:3: outputs[1].uri: '/out/m/' overlaps outputs[0]'s '/out/m'"), std::string::npos)
      << same;
  std::string nested = Refusal("outputs:\n  - {name: model, uri: s3://b/run}\n  - {name: logs, uri: s3://b/run/logs}\n"
                               "roles: {w: {command: a}}\n");
  EXPECT_NE(nested.find("outputs[1].uri: 's3://b/run/logs' overlaps outputs[0]'s 's3://b/run'"), std::string::npos)
      << nested;
  EXPECT_EQ(Refusal("outputs:\n  - {name: model, uri: s3://b/run}\n  - {name: logs, uri: s3://b/run-logs}\n"
                    "roles: {w: {command: a}}\n"), "") << "a shared prefix is not a shared folder";
}

TEST(ParseJobSpec, RefusesTwoShippedThingsWithOneName) {
  std::string files = Refusal("files: [a/config.json, b/config.json]\nroles: {w: {command: a}}\n");
  EXPECT_NE(files.find("files[1]: a copy of b/config.json would land in the task's folder as 'config.json', where "
                       "files[0] (a copy of a/config.json) already is"), std::string::npos) << files;
  std::string archives = Refusal("archives: [a/env.tar.gz, {path: b/other.zip, name: env}]\nroles: {w: {command: a}}\n");
  EXPECT_NE(archives.find("archives[1].name: the unpacked /tmp/jobs/b/other.zip would land in the task's folder as 'env'"),
            std::string::npos) << archives;
  std::string mixed = Refusal("files: [lib]\narchives: [lib.tar]\nroles: {w: {command: a}}\n");
  EXPECT_NE(mixed.find("archives[0].name:"), std::string::npos) << mixed;
  EXPECT_EQ(Refusal("files: [a/x.json, b/y.json]\narchives: [a/env.tar.gz, {path: b/env.tar.gz, name: env2}]\n"
                    "roles: {w: {command: a}}\n"), "");
}

TEST(ParseJobSpec, RefusesLessMemoryThanATaskNeedsToStart) {
  std::string tiny = Refusal("roles: {w: {command: a, memory: 1M}}\n");
  EXPECT_NE(tiny.find("roles.w.memory: '1M' is less than the 16M a task needs to start"), std::string::npos) << tiny;
  EXPECT_EQ(Refusal("roles: {w: {command: a, memory: 16M}}\n"), "");
}

TEST(ParseJobSpec, ADerivedNameIsMadeValidInsteadOfRefused) {
  struct Case {
    const char* default_name;
    const char* expected;
  } cases[] = {{"\"><img src=x onerror=alert(1)>", "img-src-x-onerror-alert-1"},
               {"../../etc/passwd", "etc-passwd"},
               {"my job (v2)", "my-job-v2"},
               {"train.v1", "train.v1"},
               {"...", "job"},
               {"", "job"},
               {"\xe4\xbd\x9c\xe4\xb8\x9a", "job"}};
  for (const auto& c : cases) {
    ParseOptions options = Options();
    options.default_name = c.default_name;
    auto parsed = ParseJobSpec("roles: {w: {command: a}}\n", options);
    ASSERT_TRUE(parsed.ok()) << c.default_name << ": " << parsed.status().ToString();
    EXPECT_EQ(parsed->spec.name, c.expected) << c.default_name;
  }
  ParseOptions long_name = Options();
  long_name.default_name = std::string(300, 'x');
  EXPECT_EQ(ParseJobSpec("roles: {w: {command: a}}\n", long_name)->spec.name, std::string(128, 'x'));
  ParseOptions named = Options();
  named.default_name = "../x";
  EXPECT_NE(Refusal("name: ../x\nroles: {w: {command: a}}\n", named).find("is not a valid job name"), std::string::npos)
      << "a name the user wrote is still refused, not changed";
}

}  // namespace
}  // namespace shoal

namespace shoal {
namespace {

// fuzz_job_spec's finding: yaml-cpp's LoadAll yields the same empty document for ever on
// a stray ',' at the top (it took 1.5 GB in 11 s); the parser must answer at once.
TEST(ParseJobSpec, ALineYamlCannotReadEndsTheParseInsteadOfLoopingForEver) {
  for (const char* text : {", a", "# a comment\n, env: # A "}) {
    auto parsed = ParseJobSpec(text, Options());
    EXPECT_FALSE(parsed.ok()) << text;
  }
}

}  // namespace
}  // namespace shoal
