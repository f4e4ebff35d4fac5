#include "client/job_view.h"

#include <algorithm>
#include <ctime>
#include <map>
#include <sstream>
#include <vector>

#include "common/units.h"

namespace shoal {
namespace {

std::string Time(int64_t wall_ms) {
  if (wall_ms <= 0) return "-";
  time_t seconds = static_cast<time_t>(wall_ms / 1000);
  tm local;
  localtime_r(&seconds, &local);
  char buf[32];
  strftime(buf, sizeof buf, "%m-%d %H:%M:%S", &local);
  return buf;
}

std::string Duration(const Json& job) {
  int64_t start = job.value("started_ms", int64_t{0});
  if (start <= 0) return "-";
  int64_t end = job.value("finished_ms", int64_t{0});
  if (end <= 0) end = static_cast<int64_t>(std::time(nullptr)) * 1000;
  return FormatDuration(std::max<int64_t>(0, end - start));
}

std::string Pad(std::string text, size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

std::string Percent(double fraction) { return std::to_string(static_cast<int>(fraction * 100 + 0.5)) + "%"; }

const Json& LatestTasks(const Json& detail) {
  static const Json kEmpty = Json::array();
  const Json& attempts = detail["attempts"];
  if (!attempts.is_array() || attempts.empty()) return kEmpty;
  return attempts.back()["tasks"];
}

// Per role, in spec order: task count, progress and states.
struct RoleLine {
  std::string role;
  int tasks = 0;
  double progress = 0;
  std::map<std::string, int> states;
};

// A running task that the AM flagged hung shows as HUNG: still running, doing nothing.
std::string ShownState(const Json& task) {
  std::string state = task.value("state", "?");
  return state == "RUNNING" && task.value("hung", false) ? "HUNG" : state;
}

std::vector<std::string> HungTasks(const Json& detail) {
  std::vector<std::string> names;
  for (const Json& task : LatestTasks(detail)) {
    if (ShownState(task) == "HUNG") names.push_back(task["role"].get<std::string>() + "[" + std::to_string(task["index"].get<int>()) + "]");
  }
  return names;
}

std::vector<RoleLine> RoleLines(const Json& detail) {
  std::vector<RoleLine> lines;
  for (const Json& role : detail["spec"]["roles"]) lines.push_back({role["name"], role["instances"], 0, {}});
  for (const Json& task : LatestTasks(detail)) {
    for (auto& line : lines) {
      if (line.role != task["role"]) continue;
      line.progress += task.value("progress", 0.0) / std::max(1, line.tasks);
      line.states[ShownState(task)]++;
    }
  }
  return lines;
}

}  // namespace

std::string BoardUrl(const Json& detail) {
  if (detail.contains("board_url") && detail["board_url"].is_string()) return detail["board_url"];
  const Json& attempts = detail["attempts"];
  if (attempts.is_array() && !attempts.empty() && attempts.back().contains("board_url") &&
      attempts.back()["board_url"].is_string()) {
    return attempts.back()["board_url"];
  }
  return "";
}

std::string ProgressBar(double fraction, int width) {
  fraction = std::clamp(fraction, 0.0, 1.0);
  int filled = static_cast<int>(fraction * width + 0.5);
  std::string bar = "[" + std::string(filled, '#') + std::string(width - filled, '-') + "] ";
  std::string pct = Percent(fraction);
  return bar + std::string(4 - std::min<size_t>(4, pct.size()), ' ') + pct;
}

std::string RenderStatus(const Json& d) {
  std::ostringstream out;
  out << d["id"].get<std::string>() << "  " << d["name"].get<std::string>() << "  " << d["state"].get<std::string>()
      << "  " << Percent(d.value("progress", 0.0)) << "\n";
  out << "  framework " << d["framework"].get<std::string>() << ", user " << d["user"].get<std::string>()
      << ", attempt " << d["attempt"] << " of " << d["max_attempts"] << ", submitted " << Time(d["created_ms"])
      << ", ran " << Duration(d) << "\n";
  if (!d.value("message", "").empty()) out << "  " << d["message"].get<std::string>() << "\n";
  if (std::string board = BoardUrl(d); !board.empty()) out << "  board: " << board << "\n";
  if (auto hung = HungTasks(d); !hung.empty()) {
    out << "  hung: ";
    for (size_t i = 0; i < hung.size(); ++i) out << (i ? ", " : "") << hung[i];
    out << " made no progress, printed no metric and used no CPU for timeouts.hang; `shoal stack "
        << d["id"].get<std::string>() << "` shows where they wait\n";
  }
  const Json& tasks = LatestTasks(d);
  if (!tasks.empty()) {
    out << "\n  " << Pad("TASK", 14) << Pad("STATE", 11) << Pad("HOST", 16) << Pad("PID", 8) << Pad("PROGRESS", 9)
        << Pad("EXIT", 6) << "MESSAGE\n";
    for (const Json& t : tasks) {
      std::string name = t["role"].get<std::string>() + "[" + std::to_string(t["index"].get<int>()) + "]";
      int exit_code = t.value("exit_code", -1);
      out << "  " << Pad(name, 14) << Pad(ShownState(t), 11) << Pad(t.value("host", "-"), 16)
          << Pad(std::to_string(t.value("pid", 0)), 8) << Pad(Percent(t.value("progress", 0.0)), 9)
          << Pad(exit_code < 0 ? "-" : std::to_string(exit_code), 6) << t.value("message", "") << "\n";
    }
  }
  if (d["attempts"].size() > 1) {
    out << "\n  attempts:\n";
    for (const Json& a : d["attempts"]) {
      out << "    " << a["number"] << "  " << Pad(a["state"], 10) << a.value("message", "") << "\n";
    }
  }
  if (d.contains("saved_models") && d["saved_models"].is_array() && !d["saved_models"].empty()) {
    out << "\n  saved models:\n";
    for (const Json& m : d["saved_models"]) {
      out << "    " << Pad(m.value("name", ""), 19) << Pad(m.value("state", ""), 10)
          << (m.value("state", "") == "failed" ? m.value("message", "") : m.value("uri", "")) << "\n";
    }
  }
  if (!d["attempts"].empty()) out << "\n  logs: " << d["attempts"].back()["dir"].get<std::string>() << "\n";
  return out.str();
}

std::string RenderList(const Json& list) {
  std::ostringstream out;
  out << Pad("ID", 12) << Pad("NAME", 24) << Pad("USER", 10) << Pad("FRAMEWORK", 10) << Pad("STATE", 11)
      << Pad("PROGRESS", 9) << Pad("STARTED", 16) << "DURATION\n";
  for (const Json& j : list["jobs"]) {
    out << Pad(j["id"], 12) << Pad(j["name"].get<std::string>().substr(0, 23), 24) << Pad(j["user"], 10)
        << Pad(j["framework"], 10) << Pad(j["state"], 11) << Pad(Percent(j.value("progress", 0.0)), 9)
        << Pad(Time(j.value("started_ms", int64_t{0})), 16) << Duration(j) << "\n";
  }
  int64_t total = list.value("total", int64_t{0});
  int64_t shown = static_cast<int64_t>(list["jobs"].size());
  if (total > shown) out << "(" << shown << " of " << total << " jobs; --limit and --offset page through them)\n";
  return out.str();
}

std::string RenderSummary(const Json& d) {
  std::ostringstream out;
  size_t attempts = d["attempts"].size();
  out << d["id"].get<std::string>() << " (" << d["name"].get<std::string>() << ") " << d["state"].get<std::string>()
      << " in " << Duration(d) << " after " << attempts << " attempt" << (attempts == 1 ? "" : "s") << "\n";
  if (!d.value("message", "").empty() && d["state"] != "SUCCEEDED") out << "  " << d["message"].get<std::string>() << "\n";
  for (const Json& t : LatestTasks(d)) {
    std::string name = t["role"].get<std::string>() + "[" + std::to_string(t["index"].get<int>()) + "]";
    out << "  " << Pad(name, 14) << Pad(t["state"], 11);
    if (t.value("exit_code", -1) >= 0) out << "exit " << t["exit_code"];
    if (t["state"] != "SUCCEEDED" && !t.value("message", "").empty()) out << "  " << t["message"].get<std::string>();
    out << "\n";
  }
  if (attempts > 0) {
    out << "  logs: " << d["attempts"].back()["dir"].get<std::string>() << "  (shoal logs " << d["id"].get<std::string>()
        << " --role R --index I)\n";
  }
  return out.str();
}

void LiveView::Update(const Json& detail) {
  std::ostringstream text;
  std::string state = detail["state"];
  text << detail["id"].get<std::string>() << " " << detail["name"].get<std::string>() << ": " << state;
  if (!detail["attempts"].empty()) text << " (attempt " << detail["attempts"].size() << ")";
  text << "\n";
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
    key << state;
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
