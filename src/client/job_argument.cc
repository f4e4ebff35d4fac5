#include "client/job_argument.h"

namespace shoal {
namespace {

bool IsJobNumber(const std::string& digits) {
  return !digits.empty() && digits.size() <= 18 && digits.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

CLI::Option* AddJobArgument(CLI::App& command, std::string& id) {
  CLI::Validator job_id(
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
  return command.add_option("job", id, "job id (job-12 or 12)")->required()->transform(job_id);
}

}  // namespace shoal
