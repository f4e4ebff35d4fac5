// One page of a job's tasks, for GET /api/v1/jobs/ID?task_limit=N (docs/api.md): the web
// UI's job page asks for 100 tasks at a time, so a job of 10,000 tasks does not send, parse
// and draw all of them at every change. Without task_limit the detail is left whole, as
// the CLI and scripts read it.
//
// Contract:
//  - PageTasks works on the detail before it is encoded, so a page of a big job encodes
//    and sends only its tasks. It keeps, of the latest attempt's tasks, those whose role is query.role (any
//    when empty) and whose shown state is one of query.states (any when empty), from
//    query.offset, at most query.limit, in the order the attempt lists them (rank order).
//    A shown state is the task's state, except that a RUNNING task that is hung is HUNG,
//    as `shoal status` shows it. Earlier attempts' `tasks` become [] (their state and
//    message stay): they are as many, and the page shows the latest attempt's.
//  - It returns what the answer adds: `task_page`: {offset, limit, matched, total} (matched: tasks that pass the
//    filter; total: the latest attempt's tasks) and `task_summary`: [{role, tasks,
//    states: [{state, count}]}] over every task of the latest attempt, roles in the order
//    of their first task, states most first (ties by name): `worker: 9,998 RUNNING,
//    1 FAILED, 1 PENDING`. A detail with no attempt gets an empty page and summary.
//  - ParseTaskStates reads task_state: shown states separated by commas, in any case;
//    anything else is InvalidArgument naming the states there are.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/status.h"
#include "protocol/job_views.h"

namespace shoal {

struct TaskPageQuery {
  int64_t offset = 0;
  int limit = 100;
  std::string role;                 // "": every role
  std::vector<std::string> states;  // shown states; empty: every state
};

Result<std::vector<std::string>> ParseTaskStates(const std::string& text);

// {"task_page": ..., "task_summary": ...}, to merge into the encoded detail.
Json PageTasks(protocol::JobDetail& detail, const TaskPageQuery& query);

}  // namespace shoal
