// `shoal am`: the application master's process entry (started by a backend, not users).
#pragma once

namespace shoal {
int AmCommand(int argc, char** argv);
}
