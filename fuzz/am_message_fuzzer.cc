// Container-to-AM messages: arbitrary bytes as a message body, decoded as each message
// kind and applied to a real AttemptTracker, as the AM's handlers do. Nothing may crash,
// throw or hang, and the tracker's snapshot must stay serialisable.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/clock.h"
#include "master/am_messages.h"
#include "master/attempt_tracker.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shoal;
  if (size == 0) return 0;
  Json body = Json::parse(data + 1, data + size, nullptr, false);
  if (body.is_discarded()) return 0;
  JobSpec spec;
  spec.timeouts.hang_ms = 1000;
  spec.roles.push_back(RoleSpec{.name = "worker", .instances = 2, .command = "true"});
  spec.roles.push_back(RoleSpec{.name = "ps", .instances = 1, .command = "true", .service = true});
  FakeClock clock;
  AttemptTracker tracker(spec, "job-1", 1, {}, clock);
  auto task = TaskFromBody(body);
  if (!task.ok()) return 0;
  // the first byte picks the order of the messages, so every state is reached
  for (int step = 0; step < 4; ++step) {
    switch ((data[0] >> (2 * step)) & 3) {
      case 0:
        if (auto m = RegisterFromBody(body); m.ok()) (void)tracker.Register(task->role, task->index, m->host, m->ports, m->gpus);
        break;
      case 1:
        if (auto m = StartedFromBody(body); m.ok()) (void)tracker.Started(task->role, task->index, m->pid, m->board_url);
        break;
      case 2:
        if (auto m = HeartbeatFromBody(body); m.ok()) (void)tracker.Heartbeat(task->role, task->index, *m);
        break;
      case 3:
        if (auto m = ExitFromBody(body); m.ok()) (void)tracker.Exited(task->role, task->index, m->exit, m->message);
        break;
    }
    clock.Advance(700);
    tracker.Tick();
  }
  (void)tracker.Snapshot().dump(-1, ' ', false, Json::error_handler_t::replace);
  (void)tracker.TakeSeries().dump(-1, ' ', false, Json::error_handler_t::replace);
  (void)tracker.TasksToStop();
  return 0;
}
