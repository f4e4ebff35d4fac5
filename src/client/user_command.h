// `shoal user add NAME [--admin]`: gives a user a token of their own on this home's
// server (server/user_tokens.h). Run by the server's owner, on the server's machine; the
// server knows the user at once. Prints the token once, and how the user keeps it.
#pragma once

#include <CLI/CLI.hpp>

#include "client/client_context.h"

namespace shoal {

void AddUserCommand(CLI::App& app, ClientContext& ctx);

}  // namespace shoal
