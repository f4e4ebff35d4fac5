#include "backend/slurm/slurm_job_options.h"

#include <algorithm>

#include "backend/slurm/slurm_job.h"

namespace shoal {

const std::vector<std::string>& SlurmLockableFields() {
  static const std::vector<std::string> kFields = {"partition", "account",     "qos",  "time",
                                                   "constraint", "reservation", "extra"};
  return kFields;
}

std::vector<std::string> AttemptSbatchOptions(const SlurmDefaults& defaults, const JobSpec& spec) {
  std::vector<std::string> options;
  if (!defaults.partition.empty()) options.push_back("--partition=" + defaults.partition);
  options.insert(options.end(), defaults.options.begin(), defaults.options.end());
  for (const auto& [field, option] : spec.slurm.Options()) {
    std::string name = SlurmOptionName(option);
    std::erase_if(options, [&](const std::string& given) { return SlurmOptionName(given) == name; });
    options.push_back(option);
  }
  if (std::string time = SlurmTimeOption(spec.timeouts.job_ms, options); !time.empty()) options.push_back(time);
  // A priority below normal lowers the job's place in Slurm's queue too (raising it needs
  // privileges sbatch's users lack: a queue's QOS does that).
  bool niced = std::any_of(options.begin(), options.end(),
                           [](const std::string& given) { return SlurmOptionName(given) == "--nice"; });
  if (spec.priority < 0 && !niced) options.push_back("--nice=" + std::to_string(-spec.priority));
  std::erase_if(options, [](const std::string& given) { return SlurmOptionName(given) == "--signal"; });
  bool limited = std::any_of(options.begin(), options.end(),
                             [](const std::string& given) { return SlurmOptionName(given) == "--time"; });
  if (limited) options.push_back("--signal=B:USR1@" + std::to_string(kSlurmWarningSeconds));
  return options;
}

Status CheckSlurmLocks(const SlurmDefaults& defaults, const SlurmSection& section) {
  for (const auto& [field, option] : section.Options()) {
    std::string name = field.substr(6, field.find('[') == std::string::npos ? std::string::npos : field.find('[') - 6);
    if (!defaults.locked.count(name)) continue;
    std::string kept = "the cluster's default";
    for (const std::string& given : defaults.options) {
      if (SlurmOptionName(given) == SlurmOptionName(option)) kept = given;
    }
    if (name == "partition" && !defaults.partition.empty()) kept = "--partition=" + defaults.partition;
    return InvalidArgument(field + ": this server's administrator keeps the job's " + name + " (" + kept +
                           "); fix: drop " + field + " from the job, or ask them");
  }
  return Status::Ok();
}

}  // namespace shoal
