#include "client/user_command.h"

#include <cstdio>

#include "server/user_tokens.h"

namespace shoal {

void AddUserCommand(CLI::App& app, ClientContext& ctx) {
  auto* user = app.add_subcommand("user", "Users of this home's server: each with a token of their own");
  user->require_subcommand(1);
  auto* add = user->add_subcommand("add", "Give a user a new token (replacing any old one) and print it");
  auto name = std::make_shared<std::string>();
  auto admin = std::make_shared<bool>(false);
  add->add_option("name", *name, "the user's name, as their jobs will show it")->required();
  add->add_flag("--admin", *admin, "the user may act on every user's jobs");
  add->add_flag("--json", ctx.json, "print {user, admin, token} as JSON");
  add->callback([&ctx, name, admin] {
    auto token = AddUser(ctx.home, *name, *admin);
    if (!token.ok()) throw CLI::RuntimeError(ReportError(token.status()));
    if (ctx.json) {
      std::printf("%s\n", Json{{"user", *name}, {"admin", *admin}, {"token", *token}}.dump().c_str());
      return;
    }
    std::printf("%s\n", token->c_str());
    std::fprintf(stderr,
                 "shoal: %s%s has a new token (above, shown once). They keep it in their own ~/.shoal/token "
                 "(mode 0600) or in $SHOAL_TOKEN, and reach this server with SHOAL_SERVER=<its URL>.\n",
                 name->c_str(), *admin ? " (an administrator)" : "");
  });
}

}  // namespace shoal
