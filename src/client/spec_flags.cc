#include "client/spec_flags.h"

#include <filesystem>

#include "common/files.h"
#include "common/json.h"
#include "runtime/framework.h"

namespace shoal {

void SpecFlags::AddTo(CLI::App& app) {
  app.add_option("spec", file, "the job spec (YAML); see docs/job-spec.md");
  app.add_option("--name", name, "job name");
  std::string frameworks;
  for (const std::string& known : KnownFrameworks()) frameworks += (frameworks.empty() ? "" : ", ") + known;
  app.add_option("--framework", framework, "the framework whose variables the tasks get: " + frameworks +
                                               " (docs/frameworks.md)");
  app.add_option("--cluster", cluster, "where the job runs: local or slurm (the server must run jobs there)");
  app.add_option("--queue", queue, "the server's queue the job waits in (shoal queues lists them; default: default)");
  app.add_option("--priority", priority, "low, normal, high or -1000..1000: the job's order within its queue");
  app.add_option("--estimate", estimate, "how long the job is expected to run, e.g. 2h: lets it start in gaps (backfill)");
  app.add_option("--workdir", workdir, "directory the tasks start in (default: the spec's folder)");
  app.add_option("--max-attempts", max_attempts, "how many times the job may run in all");
  app.add_option("--heartbeat-timeout", heartbeat_timeout, "a task silent this long is lost, e.g. 30s");
  app.add_option("--register-timeout", register_timeout, "how long containers may take to register, e.g. 2m");
  app.add_option("--job-timeout", job_timeout, "longest an attempt may run, e.g. 1h");
  app.add_option("--env", env, "job environment variable NAME=VALUE (repeatable)");
  app.add_option("--secret-env", secret_env,
                 "a secret job environment variable NAME=VALUE: masked in the UI, the API and the logs (repeatable)");
  app.add_option("--instances", instances, "tasks of a role: ROLE=N (repeatable)");
  app.add_option("--cpus", cpus, "CPUs per task: ROLE=N");
  app.add_option("--memory", memory, "memory per task: ROLE=SIZE, e.g. worker=4G");
  app.add_option("--gpus", gpus, "GPUs per task: ROLE=N");
  app.add_option("--command", command, "a role's command: ROLE=COMMAND");
  app.add_option("--role-env", role_env, "a role's environment variable: ROLE:NAME=VALUE");
  app.add_option("--set", set, "any spec field: PATH=VALUE, e.g. roles.worker.instances=4 (repeatable)");
  app.add_option("--slurm-partition", slurm_partition, "on Slurm: the partition the job runs in");
  app.add_option("--slurm-account", slurm_account, "on Slurm: the account the job is charged to");
  app.add_option("--slurm-qos", slurm_qos, "on Slurm: the job's quality of service");
  app.add_option("--slurm-time", slurm_time, "on Slurm: the job's time limit, e.g. 2h (default: timeouts.job and a minute)");
  app.add_option("--slurm-constraint", slurm_constraint, "on Slurm: the node features the job needs");
  app.add_option("--slurm-reservation", slurm_reservation, "on Slurm: the reservation the job runs in");
  app.add_option("--slurm-extra", slurm_extra, "on Slurm: one more sbatch option, e.g. --slurm-extra=--exclusive (repeatable)");
}

Result<std::vector<std::string>> SpecFlags::Overrides(std::map<std::string, std::string>* typed) const {
  std::vector<std::string> out;
  std::map<std::string, std::string> names;
  auto field = [&](const std::string& value, const char* path, const char* flag, bool literal) {
    if (value.empty()) return;
    out.push_back(std::string(path) + (literal ? ":=" : "=") + value);
    names[path] = std::string(flag) + " " + value;
  };
  field(name, "name", "--name", true);
  field(framework, "framework", "--framework", true);
  field(cluster, "cluster", "--cluster", true);
  field(workdir, "workdir", "--workdir", true);
  field(queue, "queue", "--queue", true);
  field(priority, "priority", "--priority", true);
  field(estimate, "estimate", "--estimate", false);
  field(max_attempts, "max_attempts", "--max-attempts", false);
  field(heartbeat_timeout, "timeouts.heartbeat", "--heartbeat-timeout", false);
  field(register_timeout, "timeouts.register", "--register-timeout", false);
  field(job_timeout, "timeouts.job", "--job-timeout", false);
  field(slurm_partition, "slurm.partition", "--slurm-partition", true);
  field(slurm_account, "slurm.account", "--slurm-account", true);
  field(slurm_qos, "slurm.qos", "--slurm-qos", true);
  field(slurm_time, "slurm.time", "--slurm-time", false);
  field(slurm_constraint, "slurm.constraint", "--slurm-constraint", true);
  field(slurm_reservation, "slurm.reservation", "--slurm-reservation", true);
  if (!slurm_extra.empty()) {
    out.push_back("slurm.extra=" + Json(slurm_extra).dump());  // a JSON list is a YAML flow list
    names["slurm.extra"] = "--slurm-extra";
  }
  auto job_env = [&](const std::vector<std::string>& values, const char* flag, const char* suffix) -> Status {
    for (const auto& e : values) {
      size_t eq = e.find('=');
      if (eq == std::string::npos || eq == 0) return InvalidArgument(std::string(flag) + " '" + e + "': write NAME=VALUE");
      out.push_back("env." + e.substr(0, eq) + suffix + ":=" + e.substr(eq + 1));
    }
    return Status::Ok();
  };
  RETURN_IF_ERROR(job_env(env, "--env", ""));
  RETURN_IF_ERROR(job_env(secret_env, "--secret-env", ".secret"));
  auto per_role = [&](const std::vector<std::string>& values, const char* flag, const char* field,
                      bool literal = false) -> Status {
    for (const auto& v : values) {
      size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0) {
        return InvalidArgument(std::string("--") + flag + " '" + v + "': write ROLE=VALUE, e.g. --" + flag + " worker=2");
      }
      std::string path = "roles." + v.substr(0, eq) + "." + field;
      out.push_back(path + (literal ? ":=" : "=") + v.substr(eq + 1));
      names[path] = std::string("--") + flag + " " + (literal ? v.substr(0, eq) + "=..." : v);
    }
    return Status::Ok();
  };
  RETURN_IF_ERROR(per_role(instances, "instances", "instances"));
  RETURN_IF_ERROR(per_role(cpus, "cpus", "cpus"));
  RETURN_IF_ERROR(per_role(memory, "memory", "memory"));
  RETURN_IF_ERROR(per_role(gpus, "gpus", "gpus"));
  RETURN_IF_ERROR(per_role(command, "command", "command", /*literal=*/true));
  for (const auto& v : role_env) {
    size_t colon = v.find(':');
    if (colon == std::string::npos || colon == 0 || v.find('=', colon) == std::string::npos) {
      return InvalidArgument("--role-env '" + v + "': write ROLE:NAME=VALUE, e.g. --role-env worker:OMP_NUM_THREADS=1");
    }
    std::string assignment = v.substr(colon + 1);
    size_t eq = assignment.find('=');
    out.push_back("roles." + v.substr(0, colon) + ".env." + assignment.substr(0, eq) + ":=" + assignment.substr(eq + 1));
  }
  out.insert(out.end(), set.begin(), set.end());
  if (typed) *typed = std::move(names);
  return out;
}

Result<std::string> ReadSpecFile(const std::string& path) {
  auto content = ReadFileUpTo(path, kMaxSpecBytes);
  if (content.ok()) return content;
  if (content.status().code() == StatusCode::kNotFound) {
    return InvalidArgument("cannot read the job spec '" + path + "': check the path");
  }
  return InvalidArgument("the job spec " + content.status().message() +
                         "; give the job's YAML file (e.g. job.yaml, as in examples/)");
}

Result<ParsedSpec> LoadSpec(const SpecFlags& flags) {
  ParseOptions options;
  options.known_frameworks = KnownFrameworks();
  ASSIGN_OR_RETURN(options.overrides, flags.Overrides(&options.flag_names));
  std::string text;
  if (flags.file.empty()) {
    options.source_name = "flags";
    options.base_dir = AbsolutePath(".");
  } else {
    ASSIGN_OR_RETURN(text, ReadSpecFile(flags.file));
    options.source_name = flags.file;
    options.base_dir = DirName(AbsolutePath(flags.file));
    options.default_name = std::filesystem::path(flags.file).stem().string();
  }
  return ParseJobSpec(text, options);
}

}  // namespace shoal
