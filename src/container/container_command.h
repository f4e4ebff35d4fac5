// `shoal container`: the container agent's process entry (started by the AM's backend).
#pragma once

namespace shoal {
int ContainerCommand(int argc, char** argv);
}
