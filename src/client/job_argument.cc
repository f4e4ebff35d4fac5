#include "client/job_argument.h"

namespace shoal {
namespace {

bool IsJobNumber(const std::string& digits) {
  return !digits.empty() && digits.size() <= 18 && digits.find_first_not_of("0123456789") == std::string::npos;
}

CLI::Validator JobId() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        std::string digits = value.starts_with("job-") ? value.substr(4) : value;
        if (IsJobNumber(digits)) {
          value = "job-" + digits;
          return "";
        }
        std::string shown = value.size() > 64 ? value.substr(0, 64) + "..." : value;
        return "'" + shown + "' is not a job id; job ids look like job-12 or 12 (`shoal list` shows them)";
      },
      "JOB");
}

}  // namespace

CLI::Option* AddJobArgument(CLI::App& command, std::string& id) {
  return command.add_option("job", id, "job id (job-12 or 12)")->required()->transform(JobId());
}

CLI::Option* AddJobArguments(CLI::App& command, std::vector<std::string>& ids) {
  return command.add_option("job", ids, "job ids (job-12 or 12), one or more")->required()->transform(JobId());
}

}  // namespace shoal
