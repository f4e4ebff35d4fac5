// JobView: how jobs look in the terminal: the live progress display of `shoal run`,
// the summary a finished job ends with, and the tables of `shoal status` and `shoal list`.
//
// Contract: functions take the API's JSON (JobRecord::Detail / Summary) and return text;
// LiveView keeps what it drew last so it can redraw in place on a terminal, or print only
// changes when the output is a file or pipe.
// Thread-safety: LiveView is used by one thread.
#pragma once

#include <cstdio>
#include <string>

#include "common/json.h"

namespace shoal {

std::string RenderStatus(const Json& detail);
std::string RenderList(const Json& list);
std::string RenderSummary(const Json& detail);
// "[########------------]  42%"
std::string ProgressBar(double fraction, int width);
// The URL of the job's board while it runs, or "".
std::string BoardUrl(const Json& detail);

class LiveView {
 public:
  LiveView(FILE* out, bool terminal) : out_(out), terminal_(terminal) {}
  void Update(const Json& detail);
  void Finish();

 private:
  FILE* out_;
  bool terminal_;
  int drawn_lines_ = 0;
  std::string last_text_;
};

}  // namespace shoal
