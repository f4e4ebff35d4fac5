// JobView: how jobs look in the terminal: the live progress display of `shoal run`,
// the summary a finished job ends with, and the tables of `shoal status` and `shoal list`.
//
// Contract: functions take the API's typed views (protocol/job_views.h, decoded from what
// the server sent) and return text; LiveView keeps what it drew last so it can redraw in
// place on a terminal, or print only changes when the output is a file or pipe.
// Thread-safety: LiveView is used by one thread.
#pragma once

#include <cstdio>
#include <string>

#include "protocol/job_views.h"

namespace shoal {

// The job, and the tasks and logs folder of one attempt: `attempt` (1-based; 0 or one the
// job does not have: the latest). Up to kListedTasks tasks are listed one a line; more are
// summarised, one line per role counting its tasks by state, with the tasks that failed,
// were lost or hang listed below (at most kListedTasks), unless `all_tasks`.
inline constexpr size_t kListedTasks = 20;
std::string RenderStatus(const protocol::JobDetail& detail, int attempt = 0, bool all_tasks = false);
std::string RenderList(const protocol::JobList& list);
// How a finished job ends `shoal run` and `shoal wait`: its state, each task's exit (more
// than kListedTasks summarised as RenderStatus does) and where the logs are.
std::string RenderSummary(const protocol::JobDetail& detail);
// "[########------------]  42%"
std::string ProgressBar(double fraction, int width);

class LiveView {
 public:
  LiveView(FILE* out, bool terminal) : out_(out), terminal_(terminal) {}
  void Update(const protocol::JobDetail& detail);
  void Finish();

 private:
  FILE* out_;
  bool terminal_;
  int drawn_lines_ = 0;
  std::string last_text_;
};

}  // namespace shoal
