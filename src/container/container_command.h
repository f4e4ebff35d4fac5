// `shoal container`: the container agent's process entry (started by the AM's backend).
//
// Contract: ParseContainerArgs reads the agent's command line (argv[0] is the command's
// name) and, from `env`, the task's token and the attempt's marker; a bad command line is
// InvalidArgument, --help is Aborted (after printing it). ContainerCommand runs the agent
// as a process; the mini cluster (tests/cluster) runs agents in threads from the same
// parsed options.
#pragma once

#include <map>
#include <string>

#include "common/status.h"
#include "container/container_agent.h"

namespace shoal {

Result<ContainerOptions> ParseContainerArgs(int argc, char** argv, const std::map<std::string, std::string>& env);
int ContainerCommand(int argc, char** argv);

}  // namespace shoal
