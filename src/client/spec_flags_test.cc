#include "client/spec_flags.h"

#include <gtest/gtest.h>

#include "runtime/framework.h"

namespace shoal {
namespace {

TEST(SpecFlags, NamedFlagsBecomeOverrides) {
  SpecFlags flags;
  flags.name = "n";
  flags.instances = {"worker=3"};
  flags.memory = {"worker=2G"};
  flags.role_env = {"worker:A=b=c"};
  flags.env = {"X=1"};
  flags.secret_env = {"KEY=a=b"};
  flags.set = {"timeouts.job=1h"};
  auto overrides = flags.Overrides();
  ASSERT_TRUE(overrides.ok());
  EXPECT_EQ(*overrides, (std::vector<std::string>{"name:=n", "env.X:=1", "env.KEY.secret:=a=b", "roles.worker.instances=3",
                                                  "roles.worker.memory=2G", "roles.worker.env.A:=b=c",
                                                  "timeouts.job=1h"}));
}

TEST(SpecFlags, AnErrorNamesTheFlagAsTheUserTypedIt) {
  SpecFlags flags;
  flags.instances = {"worker=-1"};
  flags.max_attempts = "0";
  flags.command = {"worker=echo secret-ish"};
  std::map<std::string, std::string> typed;
  ASSERT_TRUE(flags.Overrides(&typed).ok());
  EXPECT_EQ(typed["roles.worker.instances"], "--instances worker=-1");
  EXPECT_EQ(typed["max_attempts"], "--max-attempts 0");
  EXPECT_EQ(typed["roles.worker.command"], "--command worker=...") << "a command is not repeated";

  ParseOptions options;
  options.overrides = *flags.Overrides();
  options.flag_names = typed;
  auto parsed = ParseJobSpec("roles: {worker: {command: 'true'}}", options);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("flag --instances worker=-1: roles.worker.instances"), std::string::npos)
      << parsed.status().message();
}

TEST(SpecFlags, FrameworkHelpListsEveryFramework) {
  CLI::App app;
  SpecFlags flags;
  flags.AddTo(app);
  std::string help = app.get_option("--framework")->get_description();
  for (const std::string& framework : KnownFrameworks()) EXPECT_NE(help.find(framework), std::string::npos) << help;
  EXPECT_EQ(KnownFrameworks().size(), 7u);
}

TEST(SpecFlags, MalformedFlagsAreRefused) {
  SpecFlags bad_role;
  bad_role.instances = {"3"};
  EXPECT_EQ(bad_role.Overrides().status().code(), StatusCode::kInvalidArgument);
  SpecFlags bad_env;
  bad_env.role_env = {"worker=A"};
  EXPECT_FALSE(bad_env.Overrides().ok());
  SpecFlags bad_secret;
  bad_secret.secret_env = {"=x"};
  EXPECT_FALSE(bad_secret.Overrides().ok());
}

TEST(LoadSpec, ASecretFlagMakesASecretVariableOverTheFilesPlainOne) {
  SpecFlags flags;
  flags.command = {"worker=true"};
  flags.env = {"KEY=plain"};
  flags.secret_env = {"KEY=hidden"};
  auto parsed = LoadSpec(flags);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->spec.env.at("KEY"), "hidden");
  EXPECT_TRUE(parsed->spec.secrets.count("KEY"));
}

TEST(LoadSpec, FlagsAloneMakeAJobAndMissingFilesAreNamed) {
  SpecFlags flags;
  flags.command = {"worker=echo \"a: b\"; [ 1 ] && true"};  // YAML would read a mapping here
  flags.instances = {"worker=2"};
  auto parsed = LoadSpec(flags);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->spec.roles[0].instances, 2);
  EXPECT_EQ(parsed->spec.roles[0].command, "echo \"a: b\"; [ 1 ] && true");

  SpecFlags missing;
  missing.file = "/no/such/job.yaml";
  auto error = LoadSpec(missing);
  ASSERT_FALSE(error.ok());
  EXPECT_NE(error.status().message().find("/no/such/job.yaml"), std::string::npos);
}

}  // namespace
}  // namespace shoal
