// The spec document: a JobSpec written back in the job-spec schema users write
// (docs/job-spec.md), so that what the API and `shoal status --json` show can be saved and
// submitted again as it is.
//
// Contract:
//  - SpecDocument(spec) read by ParseJobSpec gives back `spec` exactly (ToJson-equal),
//    apart from `user`, which the document leaves out: the submitter is whoever submits.
//  - Roles are a list of mappings, each with its `name`: JSON objects have no order, and
//    a job's ranks follow the order of its roles. ParseJobSpec reads that form too.
//  - Sizes and durations are written in the units users write ("1G", "30s", "250ms"),
//    each the exact value; secret variables are written {secret: VALUE}.
//  - JobSpecFromDocument is SpecDocument's inverse. It reads what Shoal wrote (the job
//    history, the API's replies) and does not validate; a document from a user goes through
//    ParseJobSpec. It throws nlohmann's exceptions on a value of the wrong type.
//  - MaskSecretValues replaces every {secret: VALUE}'s VALUE with kSecretMask, for
//    everything that shows a spec to people.
// Thread-safety: pure functions.
#pragma once

#include "common/json.h"
#include "spec/job_spec.h"

namespace shoal {

Json SpecDocument(const JobSpec& spec);
JobSpec JobSpecFromDocument(const Json& document);
Json MaskSecretValues(Json document);

// True for the stored form of earlier versions (ToJson's, with its "secrets" list), which
// the job history may still hold; JobSpecFromJson reads it.
bool IsInternalSpecJson(const Json& json);

}  // namespace shoal
