#include "client/user_command.h"

#include <unistd.h>

#include <cstdio>

#include "common/paths.h"
#include "isolation/unix_account.h"

#include "server/user_tokens.h"

namespace shoal {

void AddUserCommand(CLI::App& app, ClientContext& ctx) {
  auto* user = app.add_subcommand("user", "Users of this home's server: each with a token of their own");
  user->require_subcommand(1);
  auto* add = user->add_subcommand("add", "Give a user a new token (replacing any old one) and print it");
  auto name = std::make_shared<std::string>();
  auto admin = std::make_shared<bool>(false);
  auto unix_user = std::make_shared<std::string>();
  add->add_option("name", *name, "the user's name, as their jobs will show it")->required();
  add->add_flag("--admin", *admin, "the user may act on every user's jobs");
  add->add_option("--unix-user", *unix_user,
                  "the Unix account their jobs run as on a server started as root (it must exist; docs/isolation.md)");
  add->add_flag("--json", ctx.json, "print {user, admin, token} as JSON");
  add->callback([&ctx, name, admin, unix_user] {
    if (!unix_user->empty()) {
      if (auto account = LookUpAccount(*unix_user); !account.ok()) {
        throw CLI::RuntimeError(ReportError(account.status().WithContext("--unix-user")));
      }
    }
    auto token = AddUser(ctx.home, *name, *admin, *unix_user);
    if (!token.ok()) throw CLI::RuntimeError(ReportError(token.status()));
    if (ctx.json) {
      std::printf("%s\n", Json{{"user", *name}, {"admin", *admin}, {"token", *token}}.dump().c_str());
      return;
    }
    std::printf("%s\n", token->c_str());
    if (geteuid() != 0) {
      std::fprintf(stderr,
                   "shoal: note: a server running as %s (not root) runs every user's jobs as %s: users then share "
                   "one Unix identity, and a job can read what another job can (docs/isolation.md).\n",
                   CurrentUserName().c_str(), CurrentUserName().c_str());
    } else if (unix_user->empty()) {
      std::fprintf(stderr,
                   "shoal: note: a server running as root refuses %s's jobs until a Unix account is linked: "
                   "`shoal user add %s --unix-user ACCOUNT`.\n",
                   name->c_str(), name->c_str());
    }
    std::fprintf(stderr,
                 "shoal: %s%s has a new token (above, shown once). They keep it in their own ~/.shoal/token "
                 "(mode 0600) or in $SHOAL_TOKEN, and reach this server with SHOAL_SERVER=<its URL>.\n",
                 name->c_str(), *admin ? " (an administrator)" : "");
  });
}

}  // namespace shoal
