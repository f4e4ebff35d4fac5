// `shoal server`: the long-running service (REST API, job history, scheduler).
#pragma once

namespace shoal {
int ServerCommand(int argc, char** argv);
}
