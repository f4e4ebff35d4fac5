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
// Why a local folder Shoal writes into may not be `uri` ("" when it may).
std::string HomeProblem(const std::string& uri, const std::string& home) {
  if (!uri.starts_with("/") && !uri.starts_with("file://")) return "";
  std::string folder = RealPath(uri.starts_with("file://") ? uri.substr(7) : uri);
  if (folder == "/") return "is the root folder";
  if (folder == home) return "is the server's home (" + home + ")";
  if (home.starts_with(folder + "/")) return "holds the server's home (" + home + ")";
  return "";
}

// Local outputs and checkpoint folders must not be '/', the server's home or a folder
// above it: commits write _SUCCESS and a folder per task into them, beside Shoal's state.
std::vector<SpecIssue> CheckOutputsSpareTheHome(const JobSpec& spec, const std::string& server_home) {
  std::vector<SpecIssue> issues;
  std::string home = RealPath(server_home);
  for (size_t i = 0; i < spec.outputs.size(); ++i) {
    const std::string& uri = spec.outputs[i].uri;
    std::string problem = HomeProblem(uri, home);
    if (problem.empty()) continue;
    issues.push_back({"outputs[" + std::to_string(i) + "].uri",
                      "'" + uri + "' " + problem + "; the commit writes _SUCCESS and a folder per task into it",
                      "upload into a folder of the output's own, e.g. /data/models/" + spec.outputs[i].name});
  }
  auto check_checkpoint = [&](const std::string& field, const std::optional<CheckpointSpec>& checkpoint) {
    if (!checkpoint) return;
    std::string problem = HomeProblem(checkpoint->uri, home);
    if (problem.empty()) return;
    issues.push_back({field, "'" + checkpoint->uri + "' " + problem + "; checkpoints are written into it",
                      "keep checkpoints in a folder of their own, e.g. /data/checkpoints"});
  };
  check_checkpoint("checkpoint.uri", spec.checkpoint);
  for (const RoleSpec& role : spec.roles) check_checkpoint("roles." + role.name + ".checkpoint.uri", role.checkpoint);
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
