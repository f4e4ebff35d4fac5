#include "master/mpi_launch.h"

#include <algorithm>
#include <cctype>
#include <string_view>

namespace shoal {

std::string MpiHostName(int rank) { return "shoal-task-" + std::to_string(rank); }

std::optional<int> RankFromMpiHost(const std::string& host) {
  const std::string prefix = "shoal-task-";
  if (!host.starts_with(prefix)) return std::nullopt;
  std::string digits = host.substr(prefix.size());
  if (digits.empty() || digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  return std::stoi(digits);
}

std::string MpiHostfile(const JobSpec& spec) {
  std::string hostfile;
  int rank = 0;
  for (const auto& role : spec.roles) {
    for (int i = 0; i < role.instances; ++i, ++rank) {
      hostfile += MpiHostName(rank) + " slots=" + std::to_string(role.nproc_per_node) + "\n";
    }
  }
  return hostfile;
}

std::vector<std::string> MpirunArgv(const JobSpec& spec, const std::string& hostfile, const std::string& shoal_executable) {
  int slots = 0;
  for (const auto& role : spec.roles) slots += role.instances * role.nproc_per_node;
  const RoleSpec& ranks = spec.roles.front();
  return {"mpirun", "-np", std::to_string(slots), "--hostfile", hostfile,
          // orteds are started by Shoal's containers, through the agent, never by ssh
          "--mca", "plm_rsh_agent", shoal_executable + " mpi-agent", "--mca", "plm_rsh_no_tree_spawn", "1",
          // every "host" is this machine seen as several: talk over TCP on loopback
          "--mca", "btl", "tcp,self", "--mca", "oob_tcp_if_include", "lo", "--mca", "btl_tcp_if_include", "lo",
          // the ob1 point-to-point layer only: UCX probes devices at start and has crashed
          // orted on hosts whose devices it misreads; Shoal's containers do not pin CPUs
          "--mca", "pml", "ob1", "--mca", "osc", "^ucx", "--bind-to", "none",
          // no topology shared through memory at a guessed address (runtime/mpi.cc)
          "--mca", "rtc_hwloc_vmhole", "none",
          "--tag-output", "/bin/sh", "-c", std::string(kRankOutputToTask) + ranks.command};
}

namespace {

std::optional<int> NumberAfter(const std::string& text, size_t at) {
  size_t end = at;
  while (end < text.size() && end - at < 9 && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
  if (end == at) return std::nullopt;
  return std::stoi(text.substr(at, end - at));
}

// The task whose slots hold MPI rank `mpi_rank` (mpirun maps by slot, host after host).
std::optional<int> TaskOfMpiRank(const JobSpec& spec, int mpi_rank) {
  int task = 0, first = 0;
  for (const auto& role : spec.roles) {
    for (int i = 0; i < role.instances; ++i, ++task) {
      if (mpi_rank < first + role.nproc_per_node) return task;
      first += role.nproc_per_node;
    }
  }
  return std::nullopt;
}

}  // namespace

// mpirun's own lines: --tag-output prefixes every line a rank prints with "[job,rank]<stream>:",
// so a program cannot pose as mpirun's verdict.
std::string MpirunOwnLines(const std::string& output) {
  std::string own;
  size_t start = 0;
  while (start < output.size()) {
    size_t end = output.find('\n', start);
    if (end == std::string::npos) end = output.size();
    std::string_view line(output.data() + start, end - start);
    size_t tag = line.find("]<");
    bool tagged = line.starts_with("[") && tag != std::string_view::npos && tag < 24;
    if (!tagged) own.append(line).push_back('\n');
    start = end + 1;
  }
  return own;
}

std::optional<MpiRankFailure> FailedRankFromMpirunOutput(const std::string& all_output, const JobSpec& spec) {
  const std::string output = MpirunOwnLines(all_output);
  // "mpirun noticed that process rank 1 with PID 123 on node shoal-task-1 exited on signal 9 (Killed)."
  if (size_t at = output.find("noticed that process rank "); at != std::string::npos) {
    auto mpi_rank = NumberAfter(output, at + 26);
    size_t node = output.find(" on node ", at);
    size_t line_end = output.find('\n', at);
    if (mpi_rank && node != std::string::npos && node < line_end) {
      size_t name_end = output.find(' ', node + 9);
      std::optional<int> task = RankFromMpiHost(output.substr(node + 9, name_end - node - 9));
      if (!task || *task >= spec.TotalTasks()) task = TaskOfMpiRank(spec, *mpi_rank);  // a node of this job only
      size_t how = output.find(" exited on ", node);
      std::string ended = how != std::string::npos && how < line_end
                              ? output.substr(how + 1, line_end - how - 1)
                              : std::string("ended");
      while (!ended.empty() && (ended.back() == '.' || ended.back() == '\r')) ended.pop_back();
      ExitInfo exit{1, 0};
      if (size_t sig = ended.find("signal "); sig != std::string::npos) {
        if (auto number = NumberAfter(ended, sig + 7); number && *number > 0 && *number < 128) exit = ExitInfo{0, *number};
      }
      if (task) return MpiRankFailure{*task, *mpi_rank, exit, "MPI rank " + std::to_string(*mpi_rank) + " " + ended};
    }
  }
  // "The first process to do so was: ... Process name: [[24835,1],1] ... Exit code: 3"
  if (size_t at = output.find("Process name: [["); at != std::string::npos) {
    size_t inner = output.find("],", at);  // [[job,family],rank]
    size_t close = inner == std::string::npos ? inner : output.find(']', inner + 2);
    if (close != std::string::npos && close - at < 64) {
      auto mpi_rank = NumberAfter(output, inner + 2);
      std::optional<int> task = mpi_rank ? TaskOfMpiRank(spec, *mpi_rank) : std::nullopt;
      std::string ended = "failed";
      ExitInfo exit{1, 0};
      if (size_t code = output.find("Exit code:", close); code != std::string::npos) {
        size_t digits = output.find_first_of("0123456789", code);
        if (auto value = NumberAfter(output, digits == std::string::npos ? output.size() : digits)) {
          ended = "exited with code " + std::to_string(*value);
          exit = ExitInfo{std::clamp(*value, 1, 255), 0};
        }
      }
      if (task) return MpiRankFailure{*task, *mpi_rank, exit, "MPI rank " + std::to_string(*mpi_rank) + " " + ended};
    }
  }
  return std::nullopt;
}

std::string ForegroundOrted(std::string command) {
  const std::string flag = "--daemonize";
  for (size_t at; (at = command.find(flag)) != std::string::npos;) command.erase(at, flag.size());
  return command;
}

}  // namespace shoal
