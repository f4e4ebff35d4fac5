#include "master/mpi_agent_command.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/http_client.h"
#include "master/task_tokens.h"
#include "protocol/task_messages.h"

namespace shoal {

int RunMpiAgent(const MpiAgentCall& call) {
  HttpJsonClient client("http://" + call.am_addr, 35'000);
  if (!call.mpi_token.empty()) client.set_bearer_token(call.mpi_token);
  auto launched = client.Post(protocol::kMpiLaunchPath, protocol::Encode(protocol::MpiLaunchRequest{call.host, call.command}));
  if (!launched.ok()) {
    std::fprintf(stderr, "shoal mpi-agent: %s\n", launched.status().message().c_str());
    return 1;
  }
  while (true) {
    auto waited = client.Get(std::string(protocol::kMpiWaitPath) + "?host=" + UrlEncode(call.host) + "&wait_ms=30000");
    if (!waited.ok()) {
      if (waited.status().code() == StatusCode::kTimeout) continue;
      std::fprintf(stderr, "shoal mpi-agent: %s\n", waited.status().message().c_str());
      return 1;
    }
    auto reply = protocol::Decode<protocol::MpiWaitReply>(*waited);
    if (!reply.ok()) {
      std::fprintf(stderr, "shoal mpi-agent: %s\n", reply.status().message().c_str());
      return 1;
    }
    if (reply->done) return reply->exit_code;
  }
}

int MpiAgentCommand(int argc, char** argv) {
  const char* am = std::getenv("SHOAL_AM_ADDR");
  int first = 1;
  while (first < argc && argv[first][0] == '-') ++first;  // ssh-style options mpirun may add
  if (!am || first + 1 >= argc) {
    std::fprintf(stderr, "shoal mpi-agent: mpirun runs this with a host and a command (and SHOAL_AM_ADDR set); "
                         "it is not for direct use\n");
    return 2;
  }
  MpiAgentCall call{am, "", argv[first], ""};
  for (int i = first + 1; i < argc; ++i) call.command += (call.command.empty() ? "" : " ") + std::string(argv[i]);
  if (const char* token = std::getenv(kMpiTokenVariable); token && *token) call.mpi_token = token;
  return RunMpiAgent(call);
}

}  // namespace shoal
