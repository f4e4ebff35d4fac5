// Agent-to-AM messages: arbitrary bytes as a message body, decoded as each message kind
// (protocol/task_messages.h) and applied to a real AttemptTracker, as the AM's handlers do.
// Nothing may crash, throw or hang, and the tracker's report must stay encodable.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/clock.h"
#include "master/attempt_tracker.h"
#include "protocol/attempt_messages.h"
#include "protocol/task_messages.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shoal;
  using namespace shoal::protocol;
  if (size == 0) return 0;
  Json body = Json::parse(data + 1, data + size, nullptr, false);
  if (body.is_discarded()) return 0;
  JobSpec spec;
  spec.timeouts.hang_ms = 1000;
  spec.roles.push_back(RoleSpec{.name = "worker", .instances = 2, .command = "true"});
  spec.roles.push_back(RoleSpec{.name = "ps", .instances = 1, .command = "true", .service = true});
  FakeClock clock;
  AttemptTracker tracker(spec, "job-1", 1, {}, clock);
  // the first byte picks the order of the messages, so every state is reached
  for (int step = 0; step < 4; ++step) {
    switch ((data[0] >> (2 * step)) & 3) {
      case 0:
        if (auto m = Decode<RegisterRequest>(body); m.ok()) {
          (void)tracker.Register(m->task.role, m->task.index, m->host, m->ports, m->gpus);
        }
        break;
      case 1:
        if (auto m = Decode<StartedRequest>(body); m.ok()) (void)tracker.Started(m->task.role, m->task.index, m->pid, m->board_url);
        break;
      case 2:
        if (auto m = Decode<HeartbeatRequest>(body); m.ok()) (void)tracker.Heartbeat(m->task.role, m->task.index, *m);
        break;
      case 3:
        if (auto m = Decode<ExitRequest>(body); m.ok()) (void)tracker.Exited(m->task.role, m->task.index, m->exit, m->message);
        break;
    }
    clock.Advance(700);
    tracker.Tick();
  }
  (void)Encode(tracker.Snapshot()).dump(-1, ' ', false, Json::error_handler_t::replace);
  for (const TaskSeries& s : tracker.TakeSeries()) (void)ToJson(s).dump(-1, ' ', false, Json::error_handler_t::replace);
  (void)tracker.TasksToStop();
  return 0;
}
