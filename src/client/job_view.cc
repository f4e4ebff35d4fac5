#include "client/job_view.h"

#include <algorithm>
#include <ctime>
#include <map>
#include <sstream>
#include <vector>

#include "common/units.h"

namespace shoal {
namespace {

using protocol::JobDetail;
using protocol::JobSummary;
using protocol::TaskView;

std::string Time(int64_t wall_ms) {
  if (wall_ms <= 0) return "-";
  time_t seconds = static_cast<time_t>(wall_ms / 1000);
  tm local;
  localtime_r(&seconds, &local);
  char buf[32];
  strftime(buf, sizeof buf, "%m-%d %H:%M:%S", &local);
  return buf;
}

std::string Duration(const JobSummary& job) {
  if (job.started_ms <= 0) return "-";
  int64_t end = job.finished_ms > 0 ? job.finished_ms : static_cast<int64_t>(std::time(nullptr)) * 1000;
  return FormatDuration(std::max<int64_t>(0, end - job.started_ms));
}

std::string Pad(std::string text, size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

// "low", "normal", "high" or the number.
std::string PriorityText(int priority) {
  if (priority == kLowPriority) return "low";
  if (priority == 0) return "normal";
  if (priority == kHighPriority) return "high";
  return std::to_string(priority);
}

// "  waiting: <reason> (expected to start in 12m)\n" for a queued job; "" otherwise.
std::string WaitLine(const JobSummary& job) {
  if (job.state != JobState::kQueued || job.wait_reason.empty()) return "";
  std::string line = "  waiting: " + job.wait_reason;
  if (job.expected_start_ms > 0) {
    int64_t now = static_cast<int64_t>(std::time(nullptr)) * 1000;
    line += " (in about " + FormatDuration(std::max<int64_t>(0, job.expected_start_ms - now)) + ")";
  }
  return line + "\n";
}

std::string Percent(double fraction) { return std::to_string(static_cast<int>(fraction * 100 + 0.5)) + "%"; }

const std::vector<TaskView>& LatestTasks(const JobDetail& detail) {
  static const std::vector<TaskView> kNone;
  return detail.attempts.empty() ? kNone : detail.attempts.back().tasks;
}

// Per role, in spec order: task count, progress and states.
struct RoleLine {
  std::string role;
  int tasks = 0;
  double progress = 0;
  std::map<std::string, int> states;
};

// A running task that the AM flagged hung shows as HUNG: still running, doing nothing.
std::string ShownState(const TaskView& task) {
  return task.state == TaskState::kRunning && task.hung ? "HUNG" : Name(task.state);
}

std::vector<std::string> HungTasks(const JobDetail& detail) {
  std::vector<std::string> names;
  for (const TaskView& task : LatestTasks(detail)) {
    if (ShownState(task) == "HUNG") names.push_back(task.Name());
  }
  return names;
}

std::vector<RoleLine> RoleLines(const JobDetail& detail) {
  std::vector<RoleLine> lines;
  for (const RoleSpec& role : detail.spec.roles) lines.push_back({role.name, role.instances, 0, {}});
  for (const TaskView& task : LatestTasks(detail)) {
    for (auto& line : lines) {
      if (line.role != task.role) continue;
      line.progress += task.progress / std::max(1, line.tasks);
      line.states[ShownState(task)]++;
    }
  }
  return lines;
}

// "9,998"
std::string Thousands(size_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

void TaskTable(std::ostringstream& out, const std::vector<const TaskView*>& tasks) {
  out << "\n  " << Pad("TASK", 14) << Pad("STATE", 11) << Pad("HOST", 16) << Pad("PID", 8) << Pad("PROGRESS", 9)
      << Pad("EXIT", 6) << "MESSAGE\n";
  for (const TaskView* t : tasks) {
    out << "  " << Pad(t->Name(), 14) << Pad(ShownState(*t), 11) << Pad(t->host.empty() ? "-" : t->host, 16)
        << Pad(std::to_string(t->pid), 8) << Pad(Percent(t->progress), 9)
        << Pad(t->exit_code < 0 ? "-" : std::to_string(t->exit_code), 6) << t->message << "\n";
  }
}

// Many tasks: one line per role counting its tasks by state, most first ("worker  9,998
// RUNNING, 1 FAILED, 1 PENDING"), then the tasks that went wrong (at most kListedTasks).
void TaskSummary(std::ostringstream& out, const std::vector<TaskView>& tasks, const std::string& job_id) {
  out << "\n  tasks: " << Thousands(tasks.size()) << ", by role and state (`shoal status " << job_id
      << " --tasks` lists every one)\n";
  std::vector<std::pair<std::string, std::map<std::string, size_t>>> roles;  // in rank order
  std::vector<const TaskView*> wrong;
  for (const TaskView& task : tasks) {
    auto role = std::find_if(roles.begin(), roles.end(), [&](const auto& r) { return r.first == task.role; });
    if (role == roles.end()) role = roles.insert(roles.end(), {task.role, {}});
    std::string state = ShownState(task);
    role->second[state]++;
    bool went_wrong = task.state == TaskState::kFailed || task.state == TaskState::kLost || state == "HUNG";
    if (went_wrong && wrong.size() < kListedTasks) wrong.push_back(&task);
  }
  size_t width = 0;
  for (const auto& [role, states] : roles) width = std::max(width, role.size());
  for (const auto& [role, states] : roles) {
    std::vector<std::pair<std::string, size_t>> counts(states.begin(), states.end());
    std::stable_sort(counts.begin(), counts.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    out << "    " << Pad(role + ":", width + 3);
    for (size_t i = 0; i < counts.size(); ++i) out << (i ? ", " : "") << Thousands(counts[i].second) << " " << counts[i].first;
    out << "\n";
  }
  if (wrong.empty()) return;
  out << "\n  failed, lost or hung" << (wrong.size() == kListedTasks ? " (the first " + std::to_string(kListedTasks) + ")" : "")
      << ":";
  TaskTable(out, wrong);
}

}  // namespace

std::string ProgressBar(double fraction, int width) {
  fraction = std::clamp(fraction, 0.0, 1.0);
  int filled = static_cast<int>(fraction * width + 0.5);
  std::string bar = "[" + std::string(filled, '#') + std::string(width - filled, '-') + "] ";
  std::string pct = Percent(fraction);
  return bar + std::string(4 - std::min<size_t>(4, pct.size()), ' ') + pct;
}

std::string RenderStatus(const JobDetail& d, int attempt, bool all_tasks) {
  const JobSummary& job = d.summary;
  std::ostringstream out;
  out << job.id << "  " << job.name << "  " << Name(job.state) << "  " << Percent(job.progress) << "\n";
  // Preempted attempts do not count against max_attempts: say so, or "attempt 3 of 1" puzzles.
  const auto preempted = std::count_if(d.attempts.begin(), d.attempts.end(),
                                       [](const auto& a) { return a.state == AttemptState::kPreempted; });
  out << "  framework " << job.framework << ", user " << job.user << ", attempt " << job.attempt << " of "
      << job.max_attempts + preempted;
  if (preempted > 0) out << " (" << preempted << " preempted, not counted)";
  out << ", submitted " << Time(job.created_ms) << ", ran " << Duration(job) << "\n";
  out << "  queue " << job.queue << ", priority " << PriorityText(job.priority) << "\n";
  out << WaitLine(job);
  if (!job.message.empty()) out << "  " << job.message << "\n";
  if (!d.board_url.empty()) out << "  board: " << d.board_url << "\n";
  if (!d.limits_not_enforced.empty()) out << "  limits: " << d.limits_not_enforced << "\n";
  if (auto hung = HungTasks(d); !hung.empty()) {
    out << "  hung: ";
    for (size_t i = 0; i < hung.size(); ++i) out << (i ? ", " : "") << hung[i];
    out << " made no progress, printed no metric and used no CPU for timeouts.hang; `shoal stack " << job.id
        << "` shows where they wait\n";
  }
  const bool chosen = attempt > 0 && attempt <= static_cast<int>(d.attempts.size());
  const auto& tasks = chosen ? d.attempts[attempt - 1].tasks : LatestTasks(d);
  if (chosen) out << "\n  tasks of attempt " << attempt << ":";
  if (!tasks.empty() && (all_tasks || tasks.size() <= kListedTasks)) {
    std::vector<const TaskView*> listed;
    for (const TaskView& t : tasks) listed.push_back(&t);
    TaskTable(out, listed);
  } else if (!tasks.empty()) {
    TaskSummary(out, tasks, job.id);
  }
  if (d.attempts.size() > 1 || (d.attempts.size() == 1 && d.attempts[0].state == AttemptState::kPreempted)) {
    out << "\n  attempts:\n";
    for (const auto& a : d.attempts) out << "    " << a.number << "  " << Pad(Name(a.state), 10) << a.message << "\n";
  }
  if (!d.saved_models.empty()) {
    out << "\n  saved models:\n";
    for (const auto& m : d.saved_models) {
      out << "    " << Pad(m.name, 19) << Pad(Name(m.state), 10) << (m.state == SaveState::kFailed ? m.message : m.uri)
          << "\n";
    }
  }
  if (!d.attempts.empty()) out << "\n  logs: " << (chosen ? d.attempts[attempt - 1] : d.attempts.back()).dir << "\n";
  return out.str();
}

std::string RenderList(const protocol::JobList& list) {
  std::ostringstream out;
  out << Pad("ID", 12) << Pad("NAME", 24) << Pad("USER", 10) << Pad("QUEUE", 10) << Pad("FRAMEWORK", 10)
      << Pad("STATE", 11) << Pad("PROGRESS", 9) << Pad("STARTED", 16) << "DURATION\n";
  for (const JobSummary& j : list.jobs) {
    out << Pad(j.id, 12) << Pad(j.name.substr(0, 23), 24) << Pad(j.user, 10) << Pad(j.queue, 10) << Pad(j.framework, 10)
        << Pad(Name(j.state), 11) << Pad(Percent(j.progress), 9) << Pad(Time(j.started_ms), 16) << Duration(j) << "\n";
    out << WaitLine(j);
  }
  int64_t shown = static_cast<int64_t>(list.jobs.size());
  if (list.total > shown) out << "(" << shown << " of " << list.total << " jobs; --limit and --offset page through them)\n";
  return out.str();
}

std::string RenderSummary(const JobDetail& d) {
  const JobSummary& job = d.summary;
  std::ostringstream out;
  size_t attempts = d.attempts.size();
  out << job.id << " (" << job.name << ") " << Name(job.state) << " in " << Duration(job) << " after " << attempts
      << " attempt" << (attempts == 1 ? "" : "s") << "\n";
  if (!job.message.empty() && job.state != JobState::kSucceeded) out << "  " << job.message << "\n";
  const auto& tasks = LatestTasks(d);
  if (tasks.size() > kListedTasks) {
    TaskSummary(out, tasks, job.id);  // a 1,000-task job ends in a few lines, not 1,000
    out << "\n";
  } else {
    for (const TaskView& t : tasks) {
      out << "  " << Pad(t.Name(), 14) << Pad(Name(t.state), 11);
      if (t.exit_code >= 0) out << "exit " << t.exit_code;
      if (t.state != TaskState::kSucceeded && !t.message.empty()) out << "  " << t.message;
      out << "\n";
    }
  }
  if (attempts > 0) {
    out << "  logs: " << d.attempts.back().dir << "  (shoal logs " << job.id << " --role R --index I)\n";
  }
  return out.str();
}

void LiveView::Update(const JobDetail& detail) {
  std::ostringstream text;
  text << detail.summary.id << " " << detail.summary.name << ": " << Name(detail.summary.state);
  if (!detail.attempts.empty()) text << " (attempt " << detail.attempts.size() << ")";
  text << "\n" << WaitLine(detail.summary);
  for (const RoleLine& line : RoleLines(detail)) {
    text << "  " << Pad(line.role, 10) << ProgressBar(line.progress, 30) << "  ";
    bool first = true;
    for (const auto& [name, count] : line.states) {
      text << (first ? "" : ", ") << count << " " << name;
      first = false;
    }
    if (line.states.empty()) text << line.tasks << " waiting";
    text << "\n";
  }
  std::string now = text.str();
  if (terminal_) {
    if (now == last_text_) return;
    for (int i = 0; i < drawn_lines_; ++i) std::fputs("\x1b[1A\x1b[2K", out_);
    std::fputs(now.c_str(), out_);
    drawn_lines_ = static_cast<int>(std::count(now.begin(), now.end(), '\n'));
  } else {
    // A log file gets a line when states change, not on every percent.
    std::ostringstream key;
    key << Name(detail.summary.state);
    for (const RoleLine& line : RoleLines(detail)) {
      for (const auto& [name, count] : line.states) key << line.role << name << count;
      key << static_cast<int>(line.progress * 10);
    }
    if (key.str() == last_text_) return;
    now = key.str();
    std::fputs(text.str().c_str(), out_);
  }
  last_text_ = now;
  std::fflush(out_);
}

void LiveView::Finish() { std::fflush(out_); }

}  // namespace shoal
