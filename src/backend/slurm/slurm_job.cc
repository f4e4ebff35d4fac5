#include "backend/slurm/slurm_job.h"

#include <cctype>
#include <cmath>
#include <cstring>
#include <sstream>

#include "common/shell_quote.h"

namespace shoal {
namespace {

bool IsDigits(const std::string& s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; }

}  // namespace

std::string SlurmTimeOption(int64_t job_timeout_ms, const std::vector<std::string>& admin_options) {
  if (job_timeout_ms <= 0) return "";
  for (const std::string& option : admin_options) {
    if (option.starts_with("--time=") || option == "--time" || option.starts_with("-t")) return "";
  }
  int64_t minutes = (job_timeout_ms + 60'000 + 59'999) / 60'000;
  return "--time=" + std::to_string(minutes);
}

std::string SlurmJobName(const std::string& server_id, const std::string& job_id, int attempt) {
  return "shoal-" + (server_id.empty() ? "" : server_id + "-") + job_id + "-" + std::to_string(attempt);
}

std::string SlurmComment(const std::string& user, const std::string& job_id, int attempt, const std::string& server_url) {
  auto safe = [](std::string value) {
    for (char& c : value) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && !std::strchr("._:/@=+-", c)) c = '_';
    }
    return value;
  };
  return "shoal:user=" + safe(user) + ",job=" + safe(job_id) + ",attempt=" + std::to_string(attempt) +
         ",server=" + safe(server_url);
}

int SlurmCpus(const Resources& r) { return std::max(1, static_cast<int>(std::ceil(r.cpus - 1e-9))); }

int64_t SlurmMemoryMb(const Resources& r) {
  constexpr int64_t kMiB = 1 << 20;
  return std::max<int64_t>(1, (r.memory_bytes + kMiB - 1) / kMiB);
}

namespace {

// A task's memory as Slurm's --mem-per-cpu, over its (rounded) CPUs.
std::string MemoryPerCpuOption(const Resources& task) {
  int cpus = SlurmCpus(task);
  return "--mem-per-cpu=" + std::to_string((SlurmMemoryMb(task) + cpus - 1) / cpus) + "M";
}

}  // namespace

std::vector<std::string> ComponentOptions(const RoleSpec& role) {
  std::vector<std::string> options{"--ntasks=" + std::to_string(role.instances),
                                   "--cpus-per-task=" + std::to_string(SlurmCpus(role.resources)),
                                   MemoryPerCpuOption(role.resources)};
  if (role.resources.gpus > 0) options.push_back("--gpus-per-task=" + std::to_string(role.resources.gpus));
  return options;
}

std::string BatchScript(const BatchJob& job) {
  std::ostringstream s;
  s << "#!/bin/sh\n"
    << "#SBATCH --job-name=" << job.name << "\n"
    << "#SBATCH --chdir=" << job.attempt_dir << "\n"
    << "#SBATCH --output=" << job.attempt_dir << "/am.log\n"
    << "#SBATCH --no-requeue\n";
  for (const std::string& option : job.extra_options) s << "#SBATCH " << option << "\n";
  std::string roles;
  for (size_t i = 0; i < job.roles.size(); ++i) {
    if (i > 0) s << "#SBATCH hetjob\n";
    s << "#SBATCH";
    for (const std::string& option : ComponentOptions(job.roles[i])) s << " " << option;
    s << "\n";
    roles += (i ? "," : "") + job.roles[i].name;
  }
  s << "# Written by Shoal: the application master of this attempt runs here and starts\n"
    << "# the steps of its tasks (docs/slurm.md).\n";
  std::map<std::string, std::string> env = job.env;
  env[kSlurmRolesVariable] = roles;
  for (const auto& [name, value] : env) s << "export " << name << "=" << ShellQuote(value) << "\n";
  s << "exec";
  for (const std::string& word : job.am_argv) s << " " << ShellQuote(word);
  s << "\n";
  return s.str();
}

Result<std::string> ParseSbatchJobId(const std::string& out) {
  std::string line = out.substr(0, out.find('\n'));
  std::string id = line.substr(0, line.find(';'));
  if (!IsDigits(id)) return Internal("sbatch answered '" + line + "', not a job id");
  return id;
}

std::vector<std::string> StepArgv(const StepPlacement& where, const std::string& step_name, const Resources& task,
                                  const std::vector<std::string>& agent_argv) {
  std::vector<std::string> argv{"srun"};
  if (where.het_group) argv.push_back("--het-group=" + std::to_string(*where.het_group));
  argv.insert(argv.end(), {"--nodes=1", "--ntasks=1", "--nodelist=" + where.node, "--exact", "--quiet",
                           "--job-name=" + step_name, "--cpus-per-task=" + std::to_string(SlurmCpus(task)),
                           "--mem=" + std::to_string(SlurmMemoryMb(task)) + "M"});
  argv.push_back(task.gpus > 0 ? "--gres=gpu:" + std::to_string(task.gpus) : "--gres=none");
  argv.insert(argv.end(), agent_argv.begin(), agent_argv.end());
  return argv;
}

std::vector<std::string> RoleStepArgv(std::optional<int> het_group, const std::string& step_name, int tasks,
                                      const Resources& task, const std::string& agent_output,
                                      const std::vector<std::string>& agent_argv) {
  std::vector<std::string> argv{"srun"};
  if (het_group) argv.push_back("--het-group=" + std::to_string(*het_group));
  // A task's nonzero exit must not end its peers' agents: Shoal stops them itself, with
  // SIGTERM first (a site may set KillOnBadExit=1).
  argv.insert(argv.end(), {"--ntasks=" + std::to_string(tasks), "--exact", "--quiet", "--kill-on-bad-exit=0",
                           "--job-name=" + step_name, "--cpus-per-task=" + std::to_string(SlurmCpus(task)),
                           MemoryPerCpuOption(task), "--gres=none", "--output=" + agent_output});
  argv.insert(argv.end(), agent_argv.begin(), agent_argv.end());
  return argv;
}

Result<std::vector<int>> ParseTasksPerNode(const std::string& text) {
  constexpr size_t kMaxNodes = 1 << 16;  // beyond any cluster, below what memory allows
  std::vector<int> counts;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    std::string count = item, repeat = "1";
    if (size_t open = item.find("(x"); open != std::string::npos && item.back() == ')') {
      count = item.substr(0, open);
      repeat = item.substr(open + 2, item.size() - open - 3);
    }
    if (!IsDigits(count) || !IsDigits(repeat) || count.size() > 6 || repeat.size() > 6) {
      return InvalidArgument("cannot read Slurm's tasks per node '" + text + "'");
    }
    if (counts.size() + std::stoul(repeat) > kMaxNodes) {
      return InvalidArgument("Slurm's tasks per node '" + text.substr(0, 80) + "' names more than " +
                             std::to_string(kMaxNodes) + " nodes");
    }
    counts.insert(counts.end(), std::stoul(repeat), std::stoi(count));
  }
  if (counts.empty()) return InvalidArgument("Slurm's tasks per node is empty");
  return counts;
}

Result<std::vector<std::string>> PlaceTasks(const std::vector<std::string>& nodes, const std::vector<int>& tasks_per_node,
                                            int tasks) {
  if (nodes.size() != tasks_per_node.size()) {
    return InvalidArgument("Slurm gave " + std::to_string(nodes.size()) + " nodes but tasks for " +
                           std::to_string(tasks_per_node.size()));
  }
  std::vector<std::string> placement;
  for (size_t n = 0; n < nodes.size(); ++n) {
    for (int t = 0; t < tasks_per_node[n] && static_cast<int>(placement.size()) < tasks; ++t) {
      placement.push_back(nodes[n]);
    }
  }
  if (static_cast<int>(placement.size()) < tasks) {
    return InvalidArgument("Slurm's allocation holds " + std::to_string(placement.size()) + " tasks, not " +
                           std::to_string(tasks));
  }
  return placement;
}

}  // namespace shoal
