// CheckSubmission: the one check a job passes before anything of it starts, run by the
// CLI (`shoal run`, `shoal submit`) before it contacts the server and by the server for
// every submission through the API, so the same spec gets the same errors either way.
//
// Contract:
//  - Checks, in one pass, reporting every problem of the first five at once with the
//    spec's file, line and field (spec/spec_issue.h): the job fits the cluster (fit.h),
//    the shipped files and archives exist and are safe to unpack (shipping.h), the
//    framework accepts the roles (runtime/framework.h), every command and environment
//    fits what the kernel passes to a program (launch_limits.h), and no local output is
//    '/', the server's home or a folder holding it (a commit writes _SUCCESS and a folder
//    per task there); then the data: every input
//    matches something, every scheme is known, every bucket exists and the credentials
//    are accepted (data/data_plan.h's ValidateData).
//  - Errors are the user's to fix: InvalidArgument (exit 2, a 400), or NotFound for data
//    that does not exist; a storage service that cannot be reached is kUnavailable.
// Thread-safety: a function; its data check reaches storage.
#pragma once

#include "common/status.h"
#include "spec/fit.h"
#include "spec/spec_parser.h"

namespace shoal {

// server_home: the home of the server that will run the job.
Status CheckSubmission(const ParsedSpec& parsed, const ClusterCapacity& capacity, const std::string& server_home);

}  // namespace shoal
