// Which of the AM's requests wait in the connection gate (common/connection_gate.h)
// instead of a worker thread: the agents' cluster long poll, GET /am/v1/cluster?...&wait_ms=N
// with N > 0. Each task's agent holds one from its registration until every task has
// registered, so a job of 10,000 tasks would otherwise hold 10,000 workers.
//
// Contract: the poll is parked until settled() holds (every task registered, the attempt
// ended, or the AM closing) or min(N, 30 s) has passed; then its handler runs with
// wait_ms served (removed), so it answers at once. settled() runs on the gate's thread and
// must be quick; the AM calls WakeParked() when it turns true. Anything else goes at once.
#pragma once

#include <functional>

#include "common/connection_gate.h"

namespace shoal {

ParkingRule ParkClusterPolls(std::function<bool()> settled);

}  // namespace shoal
