#include "submission/submission_check.h"

#include <filesystem>

#include "data/data_plan.h"
#include "runtime/framework.h"
#include "spec/shipping.h"
#include "submission/launch_limits.h"

namespace shoal {
namespace {

// A path with its symbolic links resolved as far as it exists, without a trailing '/'.
std::string RealPath(const std::string& path) {
  std::error_code ec;
  std::string real = std::filesystem::weakly_canonical(path, ec).string();
  if (ec || real.empty()) real = path;
  while (real.size() > 1 && real.back() == '/') real.pop_back();
  return real;
}

// A local output must not be '/', the server's home or a folder above it: the commit
// writes _SUCCESS and a folder per task into it, beside Shoal's own state.
std::vector<SpecIssue> CheckOutputsSpareTheHome(const JobSpec& spec, const std::string& server_home) {
  std::vector<SpecIssue> issues;
  std::string home = RealPath(server_home);
  for (size_t i = 0; i < spec.outputs.size(); ++i) {
    const std::string& uri = spec.outputs[i].uri;
    if (!uri.starts_with("/") && !uri.starts_with("file://")) continue;
    std::string folder = RealPath(uri.starts_with("file://") ? uri.substr(7) : uri);
    std::string problem;
    if (folder == "/") problem = "is the root folder";
    else if (folder == home) problem = "is the server's home (" + home + ")";
    else if (home.starts_with(folder + "/")) problem = "holds the server's home (" + home + ")";
    if (problem.empty()) continue;
    issues.push_back({"outputs[" + std::to_string(i) + "].uri",
                      "'" + uri + "' " + problem + "; the commit writes _SUCCESS and a folder per task into it",
                      "upload into a folder of the output's own, e.g. /data/models/" + spec.outputs[i].name});
  }
  return issues;
}

void Append(std::vector<SpecIssue>& issues, const std::vector<SpecIssue>& more) {
  issues.insert(issues.end(), more.begin(), more.end());
}

}  // namespace

Status CheckSubmission(const ParsedSpec& parsed, const ClusterCapacity& capacity, const std::string& server_home) {
  const JobSpec& spec = parsed.spec;
  std::vector<SpecIssue> issues = CheckFits(spec, capacity);
  Append(issues, CheckShippedFiles(spec));
  if (const FrameworkAdapter* framework = FindFramework(spec.framework)) Append(issues, framework->Validate(spec));
  Append(issues, CheckLaunchLimits(spec, ArgumentLimits::OfThisMachine()));
  Append(issues, CheckOutputsSpareTheHome(spec, server_home));
  RETURN_IF_ERROR(FormatIssues(issues, parsed.sources));
  // Inputs must match something and buckets exist before anything starts (docs/data.md);
  // refused credentials are the user's to fix too.
  if (Status data = data::ValidateData(spec); !data.ok()) {
    return data.code() == StatusCode::kFailedPrecondition ? InvalidArgument(data.message()) : data;
  }
  return Status::Ok();
}

}  // namespace shoal
