#include "master/mpi_launch.h"

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
          "--tag-output", "/bin/sh", "-c", ranks.command};
}

std::string ForegroundOrted(std::string command) {
  const std::string flag = "--daemonize";
  for (size_t at; (at = command.find(flag)) != std::string::npos;) command.erase(at, flag.size());
  return command;
}

}  // namespace shoal
