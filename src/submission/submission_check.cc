#include "submission/submission_check.h"

#include "data/data_plan.h"
#include "runtime/framework.h"
#include "spec/shipping.h"

namespace shoal {

Status CheckSubmission(const ParsedSpec& parsed, const ClusterCapacity& capacity) {
  const JobSpec& spec = parsed.spec;
  std::vector<SpecIssue> issues = CheckFits(spec, capacity);
  auto shipping = CheckShippedFiles(spec);
  issues.insert(issues.end(), shipping.begin(), shipping.end());
  if (const FrameworkAdapter* framework = FindFramework(spec.framework)) {
    auto roles = framework->Validate(spec);
    issues.insert(issues.end(), roles.begin(), roles.end());
  }
  RETURN_IF_ERROR(FormatIssues(issues, parsed.sources));
  // Inputs must match something and buckets exist before anything starts (docs/data.md);
  // refused credentials are the user's to fix too.
  if (Status data = data::ValidateData(spec); !data.ok()) {
    return data.code() == StatusCode::kFailedPrecondition ? InvalidArgument(data.message()) : data;
  }
  return Status::Ok();
}

}  // namespace shoal
